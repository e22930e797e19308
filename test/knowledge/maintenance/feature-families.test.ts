// tier: quick
/**
 * The features of issue 29 in `/v1/features`, `/v1/version` and GraphQL, each with the family of the
 * spec's "Versioning" 2 it belongs to (ADR 0178). Each feature's behaviour is tested in its own file:
 * backup-restore, lifecycle, doctor-sample-write, ranking-eval-snapshots and
 * ../retry-fatigue-markdown.test.ts.
 */
import test from 'ava';
import { FEATURE_FAMILIES } from '../../../knowledge/introspection/introspection.js';
import { startHarness } from '../knowledge-harness.js';

const EXPECTED: Record<string, string | null> = {
  'snapshot-backup-restore': 'backup',
  'backup-namespace': 'backup',
  'backup-store': 'backup',
  'backup-catalog': 'backup',
  'restore-namespace': 'restore',
  'restore-store': 'restore',
  'restore-verification': 'restore',
  'lifecycle-retention': 'lifecycle',
  'lifecycle-compaction': 'lifecycle',
  'lifecycle-vacuum': 'lifecycle',
  'doctor-sample-write': 'doctor',
  'ranking-eval-snapshots': null,
  'review-handoff-retry-fatigue-markdown': null,
};

test('Every new knowledge feature is listed with its family, over REST and GraphQL', async (t) => {
  const h = await startHarness(t);
  const features = (await h.call('GET', '/v1/features')).body.features as any[];
  const byName = new Map(features.map((f) => [f.name, f]));
  for (const [name, family] of Object.entries(EXPECTED)) {
    const f = byName.get(name);
    t.truthy(f, name);
    t.like(f, { status: 'stable', since: 'v0.1.0' }, name);
    t.is(f.family ?? null, family, name);
  }
  // Families are the spec's four; a family feature's name starts with its family (snapshot-backup-restore
  // is the spec's own name), and every family has features.
  for (const f of features.filter((x) => x.family !== undefined)) {
    t.true((FEATURE_FAMILIES as readonly string[]).includes(f.family), f.name);
    if (f.name !== 'snapshot-backup-restore') t.true(f.name.startsWith(`${f.family}-`), f.name);
  }
  for (const family of FEATURE_FAMILIES)
    t.true(
      features.some((f) => f.family === family),
      family,
    );
  t.is(new Set(features.map((f) => f.name)).size, features.length, 'no feature is listed twice');
  t.deepEqual((await h.call('GET', '/v1/version')).body.features, features);
  const g = await h.call('POST', '/graphql', { query: '{ features { name family } }' });
  t.is(g.status, 200, g.text);
  t.deepEqual(
    g.body.data.features.filter((f: any) => f.family !== null).map((f: any) => [f.name, f.family]),
    features.filter((f) => f.family !== undefined).map((f) => [f.name, f.family]),
  );
});
