// tier: quick
import test from 'ava';
import { startHarness } from './knowledge-harness.js';
import { openDatabase } from '../../store/database.js';
import { migrate } from '../../store/migrate.js';
import { KNOWLEDGE_MIGRATIONS } from '../../store/knowledge/migrations.js';
import { NodeStore } from '../../store/knowledge/node-store.js';
import { OPEN_TIME } from '../../store/knowledge/rows.js';
import { tempDir } from '../helpers/temp-dir.js';

test('knowledge migrations apply to a fresh database with sqlite-vec loaded', (t) => {
  const db = openDatabase(`${tempDir(t)}/k.db`, { vectors: true });
  t.teardown(() => db.close());
  const result = migrate(db, KNOWLEDGE_MIGRATIONS);
  t.is(result.latest, KNOWLEDGE_MIGRATIONS.length);
  t.is(result.applied.length, KNOWLEDGE_MIGRATIONS.length);
  const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map(
    (r) => r.name,
  );
  for (const name of [
    'kn_namespaces',
    'kn_nodes',
    'kn_versions',
    'kn_support',
    'kn_sources',
    'kn_edges',
    'kn_intents',
    'kn_text',
  ])
    t.true(tables.includes(name), name);
  t.is(migrate(db, KNOWLEDGE_MIGRATIONS).applied.length, 0);
});

test('migration 7 upgrades a store: kn_versions_node goes, rows stay, lookups by node keep an index', (t) => {
  const db = openDatabase(`${tempDir(t)}/k.db`, { vectors: true });
  t.teardown(() => db.close());
  migrate(db, KNOWLEDGE_MIGRATIONS.slice(0, 6));
  db.exec(`INSERT INTO kn_namespaces (id, tenant, name, mode, created_at) VALUES (1, 'default', 'n', 'general', 1);
    INSERT INTO kn_nodes (id, ns_id, request_id, created_at, last_version) VALUES ('a', 1, NULL, 1, 2);
    INSERT INTO kn_versions (node_id, ns_id, version, content, labels, properties, confidence, utility, fingerprint,
        valid_from, valid_to, tx_from, tx_to, change)
      VALUES ('a', 1, 1, 'old', '[]', '{}', 0.5, 0, 'f1', 1, ${OPEN_TIME}, 1, 2, 'create'),
             ('a', 1, 2, 'new', '[]', '{}', 0.5, 0, 'f2', 1, ${OPEN_TIME}, 2, ${OPEN_TIME}, 'update');`);
  const index = () => db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'kn_versions_node'").get();
  t.truthy(index());
  t.deepEqual(
    migrate(db, KNOWLEDGE_MIGRATIONS.slice(0, 7)).applied.map((m) => m.name),
    ['versions-node-index-overlap'],
  );
  t.falsy(index());
  const nodes = new NodeStore(db);
  t.deepEqual(
    nodes.history('a').map((v) => [v.version, v.content]),
    [
      [1, 'old'],
      [2, 'new'],
    ],
  );
  t.deepEqual(
    nodes.current('a').map((v) => v.content),
    ['new'],
  );
  t.is(nodes.visible('a', 1, 1)?.content, 'old');
  const plan = (
    db.prepare(`EXPLAIN QUERY PLAN SELECT * FROM kn_versions WHERE node_id = ? AND tx_to = ${OPEN_TIME}`).all('a') as {
      detail: string;
    }[]
  ).map((r) => r.detail);
  t.regex(plan.join(' | '), /SEARCH kn_versions USING INDEX sqlite_autoindex_kn_versions_1 \(node_id=\?\)/);
});

test('introspection endpoints describe version, features, migrations, backends and stats', async (t) => {
  const h = await startHarness(t);
  t.deepEqual((await h.call('GET', '/v1/ping')).body, { status: 'ok' });
  const version = (await h.call('GET', '/v1/version')).body;
  t.like(version, { api_version: 'v1', docs_version: 'v1', latest_migration: KNOWLEDGE_MIGRATIONS.length });
  t.regex(version.compatibility, /minor releases before 1\.0 are non-breaking/i);
  t.regex(version.version, /^\d+\.\d+\.\d+/);
  for (const f of version.features) {
    // The spec's four fields, and `family` on the features of the backup, restore, lifecycle and doctor families.
    t.deepEqual(
      Object.keys(f).sort(),
      f.family === undefined
        ? ['description', 'name', 'since', 'status']
        : ['description', 'family', 'name', 'since', 'status'],
    );
    t.regex(f.since, /^v\d+\.\d+\.\d+$/);
  }
  const names = version.features.map((f: any) => f.name);
  for (const n of ['feature-introspection', 'explain-rank', 'source-trust-timeline']) t.true(names.includes(n));
  t.deepEqual((await h.call('GET', '/v1/features')).body.features, version.features);
  const migrations = (await h.call('GET', '/v1/migrations')).body.migrations;
  t.deepEqual(
    migrations.map((m: any) => [m.version, m.name]),
    [
      [1, 'store-metadata'],
      [2, 'graph-memory'],
      [3, 'feedback-and-review'],
      [4, 'knowledge-acquisition'],
      [5, 'text-index-porter'],
      [6, 'ranking-eval-snapshots'],
      [7, 'versions-node-index-overlap'],
      [8, 'text-index-merge-in-slices'],
    ],
  );
  const backends = (await h.call('GET', '/v1/backends')).body;
  t.deepEqual(Object.keys(backends).sort(), ['event', 'extractor', 'graph', 'kv', 'text', 'vector']);
  t.is(backends.vector.kind, 'sqlite-vec');
  t.deepEqual(
    backends.extractor,
    { kind: 'rules', model: 'rules-v1' },
    'ingest runs on the rule-based extractor by default',
  );
  t.notRegex(JSON.stringify(backends), /knowledge\.db|\/tmp|\//);
  await h.write('n', { content: 'x', source_id: 's', vector: [1, 2] });
  const stats = (await h.call('GET', '/v1/stats')).body;
  t.like(stats, { namespaces: 1, nodes: 1, versions: 1, vectors_indexed: { 2: 1 }, embedder: { kind: 'none' } });
});

test('unknown routes answer a JSON 404', async (t) => {
  const h = await startHarness(t);
  const res = await h.call('GET', '/v1/namespaces/n/nothing');
  t.is(res.status, 404);
  t.is(res.body.error.code, 'route_not_found');
});
