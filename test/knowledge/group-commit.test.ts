// tier: quick
import test from 'ava';
import { startHarness } from './knowledge-harness.js';
import { OPEN_TIME } from '../../store/knowledge/rows.js';

test('concurrent writes share group commits: fewer transactions and fsyncs than writes, every write readable', async (t) => {
  const h = await startHarness(t);
  const commits = h.store.services.core.commits;
  const before = commits.stats();
  const results = await Promise.all(
    Array.from({ length: 64 }, (_, i) =>
      h.write('g', { content: `fact number ${i}`, source_id: 's', vector: [1, i + 1] }),
    ),
  );
  const after = commits.stats();
  t.is(after.writes - before.writes, 64);
  t.true(after.groups - before.groups < 64, `64 concurrent writes took ${after.groups - before.groups} groups`);
  t.is(after.syncs - before.syncs, after.groups - before.groups, 'one fsync per group');
  t.is(new Set(results.map((r) => r.node_id)).size, 64);
  for (const [i, r] of results.entries()) {
    const node = await h.call('GET', `/v1/namespaces/g/nodes/${r.node_id}`);
    t.is(node.body.content, `fact number ${i}`);
  }
  t.like((await h.call('GET', '/v1/stats')).body, { nodes: 64, versions: 64 });
  // A group's savepoints journal their pages in memory; every other transaction keeps the default (ADR 0202).
  const db = h.store.services.core.db;
  t.is(await commits.run(() => db.pragma('temp_store', { simple: true })), 2);
  t.is(db.pragma('temp_store', { simple: true }), 0);
});

test('concurrent writes in one group see each other as serial writes do: dedup, claims and request ids', async (t) => {
  const h = await startHarness(t);
  const commits = h.store.services.core.commits;
  const groups = commits.stats().groups;
  const same = await Promise.all(
    Array.from({ length: 20 }, (_, i) => h.write('g', { content: 'Same Fact', source_id: `s${i}`, dedup: true })),
  );
  // Exactly one node was created; the other 19 writes found it and corroborated it.
  t.is(new Set(same.map((r) => r.node_id)).size, 1);
  t.is(same.filter((r) => r.deduplicated !== true).length, 1);
  const node = await h.call('GET', `/v1/namespaces/g/nodes/${same[0].node_id}`);
  t.is(node.body.source_ids.length, 20);

  const keyed = await Promise.all(
    Array.from({ length: 10 }, () => h.write('g', { content: 'once', source_id: 's', request_id: 'only-once' })),
  );
  t.is(new Set(keyed.map((r) => r.node_id)).size, 1);
  t.is(keyed.filter((r) => r.replayed !== true).length, 1);

  const claims = await Promise.all(
    Array.from({ length: 5 }, (_, i) =>
      h.write('g', { content: `owner is ${i}`, source_id: 's', properties: { subject: 'svc', predicate: 'owner' } }),
    ),
  );
  // Each claim sees every different claim written before it in the serial order, none after it.
  const sizes = claims.map((c) => (c.conflict_ids ?? []).length).sort();
  t.deepEqual(sizes, [0, 1, 2, 3, 4]);
  t.true(commits.stats().groups - groups < 35, 'the concurrent writes were grouped');
});

test('one failing write in a group does not affect the others', async (t) => {
  const h = await startHarness(t);
  const [ok1, bad, ok2] = await Promise.all([
    h.call('POST', '/v1/namespaces/g/write', { content: 'first', source_id: 's' }),
    h.call('POST', '/v1/namespaces/g/write', {
      content: 'edge to nowhere',
      source_id: 's',
      edges: [{ to: '00000000-0000-4000-8000-000000000000', type: 'rel' }],
    }),
    h.call('POST', '/v1/namespaces/g/write', { content: 'second', source_id: 's' }),
  ]);
  t.is(ok1.status, 200);
  t.is(bad.status, 400);
  t.is(bad.body.error.code, 'edge_target_not_found');
  t.is(ok2.status, 200);
  t.like((await h.call('GET', '/v1/stats')).body, { nodes: 2 });
  t.is((await h.call('GET', '/v1/namespaces/g/recovery/pending')).body.total, 0);
});

test('text rows of a group are written at its end from the versions as they then are: superseded ones not live', async (t) => {
  const h = await startHarness(t);
  const core = h.store.services.core;
  const groups = core.commits.stats().groups;
  // One group: a node, then 9 corroborations, each closing the version the one before it wrote.
  const same = await Promise.all(
    Array.from({ length: 10 }, (_, i) => h.write('g', { content: 'Zephyr quartz', source_id: `s${i}`, dedup: true })),
  );
  t.true(core.commits.stats().groups - groups < 10, 'the writes were grouped');
  const versions = core.db.prepare('SELECT vid, tx_to FROM kn_versions WHERE node_id = ?').all(same[0].node_id) as {
    vid: number;
    tx_to: number;
  }[];
  t.is(versions.length, 10);
  const text = core.db
    .prepare(`SELECT rowid AS vid, live FROM kn_text WHERE rowid IN (${versions.map((v) => v.vid).join(',')})`)
    .all() as { vid: number; live: number }[];
  t.is(text.length, 10, 'one text row per version');
  const open = versions.filter((v) => v.tx_to === OPEN_TIME).map((v) => v.vid);
  t.is(open.length, 1);
  t.deepEqual(
    text.filter((r) => r.live === 1).map((r) => r.vid),
    open,
    'only the open version is live in the text index',
  );
  const found = await h.retrieve('g', { text: 'zephyr quartz', top_k: 10 });
  t.deepEqual(
    found.map((r: { id: string }) => r.id),
    [same[0].node_id],
  );
});
