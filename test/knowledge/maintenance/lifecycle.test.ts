// tier: quick
/**
 * The knowledge store's lifecycle (features lifecycle-retention, lifecycle-compaction,
 * lifecycle-vacuum; ADR 0175): off by default, previewed before it removes anything, and never
 * removing a current version, a referenced node or a version a feedback event names.
 */
import test from 'ava';
import { startReviewHarness } from '../review-helpers.js';
import type { Harness } from '../knowledge-harness.js';

const DAY = 24;
const versionsOf = (h: Harness, nodeId: string) =>
  (
    h.store.services.core.db
      .prepare('SELECT version FROM kn_versions WHERE node_id = ? ORDER BY version')
      .all(nodeId) as {
      version: number;
    }[]
  ).map((r) => r.version);
const exists = async (h: Harness, ns: string, id: string) =>
  (await h.call('GET', `/v1/namespaces/${ns}/nodes/${id}`)).status === 200;

test('Lifecycle is off by default: nothing is previewed or removed without a rule', async (t) => {
  const h = await startReviewHarness(t);
  const node = await h.write('n', { content: 'old working memory', source_id: 'agent', mem_type: 'working' });
  h.clock.advanceHours(365 * DAY);
  const status = (await h.admin('GET', '/admin/api/lifecycle')).body;
  t.like(status, { retention: {}, compaction: { enabled: false }, vacuum: { enabled: false } });
  t.deepEqual((await h.admin('POST', '/admin/api/lifecycle/preview', {})).body, {
    dry_run: true,
    retention: [],
    compaction: null,
  });
  const run = await h.admin('POST', '/admin/api/lifecycle/run', {});
  t.deepEqual(run.body, { dry_run: false, retention: [], compaction: null });
  t.true(await exists(h, 'n', node.node_id));
});

test('Retention expires old working memory and keeps young, other-typed and referenced nodes', async (t) => {
  const h = await startReviewHarness(t);
  const w = (content: string, extra: Record<string, unknown> = {}) =>
    h.write('n', { content, source_id: 'agent', mem_type: 'working', ...extra });
  const old = await w('old scratch note');
  const linked = await w('old note an edge points at');
  const validated = await w('old note someone validated');
  const semantic = await h.write('n', { content: 'an old fact', source_id: 'docs', mem_type: 'semantic' });
  await h.write('n', {
    content: 'a fact citing the note',
    source_id: 'docs',
    edges: [{ to: linked.node_id, type: 'cites' }],
  });
  t.is((await h.call('POST', `/v1/namespaces/n/nodes/${validated.node_id}/validate`)).status, 200);
  h.clock.advanceHours(2 * DAY);
  const young = await w('a fresh scratch note');
  const other = await h.write('m', {
    content: 'old working memory elsewhere',
    source_id: 'agent',
    mem_type: 'working',
  });

  const body = { retention: { working: '24h' }, namespace: 'n' };
  const preview = await h.admin('POST', '/admin/api/lifecycle/preview', body);
  t.is(preview.status, 200, preview.text);
  t.is(preview.body.retention.length, 1);
  t.like(preview.body.retention[0], { mem_type: 'working', max_age_ms: 86_400_000, nodes: 1, truncated: false });
  t.deepEqual(
    preview.body.retention[0].sample.map((s: any) => s.node_id),
    [old.node_id],
  );
  t.true(await exists(h, 'n', old.node_id), 'a preview removes nothing');

  const run = await h.admin('POST', '/admin/api/lifecycle/run', body);
  t.is(run.status, 200, run.text);
  t.deepEqual(run.body.retention, [{ mem_type: 'working', max_age_ms: 86_400_000, nodes: 1 }]);
  t.false(await exists(h, 'n', old.node_id));
  for (const kept of [linked, validated, semantic, young]) t.true(await exists(h, 'n', kept.node_id));
  t.true(await exists(h, 'm', other.node_id), 'the namespace scope is kept');
  const results = await h.retrieve('n', { text: 'scratch note', top_k: 10 });
  t.false(results.some((r) => r.id === old.node_id));
  t.true(results.some((r) => r.id === young.node_id));
  t.deepEqual((await h.admin('POST', '/admin/api/lifecycle/preview', body)).body.retention[0].nodes, 0);
});

test('Compaction removes superseded versions closed before the horizon and never a current or referenced one', async (t) => {
  const h = await startReviewHarness(t);
  const twoSources = await h.write('n', { content: 'the ledger closes at noon', source_id: 'a' });
  await h.write('n', { content: 'the ledger closes at noon', source_id: 'b' });
  const retracted = await h.write('n', { content: 'the cache holds ten minutes', source_id: 'a' });
  await h.call('POST', `/v1/namespaces/n/nodes/${retracted.node_id}/retract-source`, {
    source_id: 'a',
    reason: 'wrong',
  });
  const withFeedback = await h.write('n', { content: 'deploys go region by region', source_id: 'c' });
  await h.call('POST', `/v1/namespaces/n/nodes/${withFeedback.node_id}/refute`);
  await h.call('POST', `/v1/namespaces/n/nodes/${withFeedback.node_id}/stale`);
  h.clock.advanceHours(40 * DAY);
  const recent = await h.write('n', { content: 'backups run nightly', source_id: 'a' });
  await h.call('POST', `/v1/namespaces/n/nodes/${recent.node_id}/retract-source`, {
    source_id: 'a',
    reason: 'changed',
  });
  const before = new Map(
    [twoSources, retracted, withFeedback, recent].map((n) => [n.node_id, versionsOf(h, n.node_id)]),
  );
  t.true(before.get(retracted.node_id)!.length >= 2);
  t.true(before.get(recent.node_id)!.length >= 2);

  const body = { compaction_horizon: '30d' };
  const preview = (await h.admin('POST', '/admin/api/lifecycle/preview', body)).body.compaction;
  t.like(preview, { horizon_ms: 30 * 86_400_000, truncated: false });
  const previewed = preview.sample.map((s: any) => `${s.node_id}@${s.version}`);
  const run = await h.admin('POST', '/admin/api/lifecycle/run', body);
  t.is(run.status, 200, run.text);
  t.is(run.body.compaction.versions, preview.versions);

  for (const [id, versions] of before) {
    const after = versionsOf(h, id);
    t.is(after.at(-1), versions.at(-1), 'the newest version is kept');
    t.true((await h.call('GET', `/v1/namespaces/n/nodes/${id}`)).status === 200);
    for (const v of versions.filter((x) => !after.includes(x))) t.true(previewed.includes(`${id}@${v}`));
  }
  t.deepEqual(versionsOf(h, retracted.node_id), before.get(retracted.node_id)!.slice(-1), 'old history is compacted');
  t.deepEqual(versionsOf(h, recent.node_id), before.get(recent.node_id), 'history inside the horizon is kept');
  // Every version a feedback event names is still there.
  const named = h.store.services.core.db
    .prepare(
      'SELECT count(*) FROM kn_feedback_events f WHERE NOT EXISTS (SELECT 1 FROM kn_versions v WHERE v.node_id = f.node_id AND v.version = f.node_version)',
    )
    .pluck()
    .get();
  t.is(named, 0);
  // The text index and the store stay coherent: retrieval still finds the current versions.
  t.true((await h.retrieve('n', { text: 'ledger noon', top_k: 5 })).some((r) => r.id === twoSources.node_id));
});

test('VACUUM runs on request, bad lifecycle requests answer 4xx, and a schedule runs a configured rule', async (t) => {
  const h = await startReviewHarness(t, {
    SVC_KNOWLEDGE_RETENTION: 'working=1h',
    SVC_KNOWLEDGE_LIFECYCLE_INTERVAL: '1s',
  });
  const vacuum = await h.admin('POST', '/admin/api/lifecycle/vacuum');
  t.is(vacuum.status, 200, vacuum.text);
  t.true(vacuum.body.before.bytes > 0 && vacuum.body.after.bytes > 0);
  t.is(vacuum.body.after.free_bytes, 0);
  for (const body of [
    { retention: { forever: '1h' } },
    { retention: { working: 'soon' } },
    { compaction_horizon: '-3d' },
    { surprise: true },
  ]) {
    const res = await h.admin('POST', '/admin/api/lifecycle/preview', body);
    t.is(res.status, 400, JSON.stringify(body));
    t.is(res.body.error.code, 'invalid_request');
  }
  t.is((await h.admin('POST', '/admin/api/lifecycle/run', { namespace: 'missing' })).status, 404);

  t.like((await h.admin('GET', '/admin/api/lifecycle')).body, { retention: { working: { max_age_ms: 3_600_000 } } });
  const note = await h.write('n', { content: 'scratch', source_id: 'agent', mem_type: 'working' });
  h.clock.advanceHours(2);
  // The schedule (every second) removes it without a request; wait for its run, bounded.
  const deadline = Date.now() + 20_000;
  while ((await exists(h, 'n', note.node_id)) && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
  t.false(await exists(h, 'n', note.node_id));
  // The last run is a scheduled one of the working rule (a later run than the removal may have
  // found nothing left: the schedule runs every second).
  t.like((await h.admin('GET', '/admin/api/lifecycle')).body.last_run.result, {
    retention: [{ mem_type: 'working' }],
  });
});
