// tier: full
import test from 'ava';
import { request, startTestKnowledgeStore } from '../helpers/servers.js';
import { testConfig } from '../helpers/test-config.js';

test('the knowledge store answers its introspection routes', async (t) => {
  const config = testConfig(t);
  const store = await startTestKnowledgeStore(t, config);
  t.deepEqual((await request(`${store.url}/v1/ping`)).body, { status: 'ok' });

  const version = await request(`${store.url}/v1/version`);
  t.is(version.status, 200);
  for (const key of ['version', 'api_version', 'docs_version', 'compatibility', 'latest_migration', 'features'])
    t.true(key in version.body, key);
  t.is(version.body.api_version, 'v1');
  t.true(Number.isInteger(version.body.latest_migration) && version.body.latest_migration >= 1);

  const features = await request(`${store.url}/v1/features`);
  for (const feature of features.body.features) {
    // A feature of a family (backup, restore, lifecycle, doctor) names it (ADR 0178).
    const keys = ['description', 'name', 'since', 'status', ...('family' in feature ? ['family'] : [])];
    t.deepEqual(Object.keys(feature).sort(), keys.sort());
    t.regex(feature.since, /^v\d+\.\d+\.\d+$/);
  }

  const migrations = await request(`${store.url}/v1/migrations`);
  t.is(migrations.body.migrations[0].version, 1);

  const backends = await request(`${store.url}/v1/backends`);
  t.is(backends.body.vector.kind, 'sqlite-vec');
  t.false(backends.text.includes(config.dataDir), 'backends never show paths');
  t.false(backends.text.includes('knowledge.db'));

  t.is((await request(`${store.url}/v1/stats`)).status, 200);
});

test('the admin listener serves health and Prometheus metrics', async (t) => {
  const store = await startTestKnowledgeStore(t);
  const health = await request(`${store.adminUrl}/healthz`);
  t.is(health.status, 200);
  const metrics = await request(`${store.adminUrl}/metrics`);
  t.is(metrics.status, 200);
  t.regex(metrics.headers.get('content-type') ?? '', /text\/plain/);
  t.regex(metrics.text, /# TYPE svc_knowledge_process_cpu_seconds_total counter/);
});
