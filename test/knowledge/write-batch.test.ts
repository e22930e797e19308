// tier: full
import test from 'ava';
import { startHarness } from './knowledge-harness.js';
import { parseExposition, samplesOf } from '../observability/exposition.js';

const BATCH = '/v1/namespaces/n/write/batch';

/** Deterministic uniform numbers in [0, 1) (mulberry32). */
let seed = 7;
function random(): number {
  seed = (seed + 0x6d2b79f5) | 0;
  let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
  return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
}

test('write/batch answers one result per item, in order, with the admission, dedup and conflict rules of single writes', async (t) => {
  const h = await startHarness(t);
  await h.call('POST', '/v1/namespaces/n/sources/label', { source_id: 'liar', credibility: 0 });
  const res = await h.call('POST', BATCH, {
    writes: [
      { content: 'the deploy runs at noon', source_id: 'ops', properties: { subject: 'deploy', predicate: 'time' } },
      { content: 'rumour', source_id: 'liar' },
      { content: 'missing source' },
      { content: 'The deploy runs at NOON', source_id: 'chat', dedup: true },
      { content: 'deploy at midnight', source_id: 'cal', properties: { subject: 'deploy', predicate: 'time' } },
      { content: 'keyed', source_id: 'ops', request_id: 'k-1' },
      { content: 'keyed again', source_id: 'ops', request_id: 'k-1' },
      { content: 'x', source_id: 'ops', mode: 'procedural' },
      { content: '', source_id: 'ops' },
    ],
  });
  t.is(res.status, 200);
  const r = res.body.results;
  t.is(r.length, 9);
  t.like(r[0], { status: 200, admitted: true });
  t.like(r[1], { status: 200, admitted: false, node_id: '00000000-0000-0000-0000-000000000000' });
  t.regex(r[1].reason, /below the admission floor/);
  t.like(r[2], { status: 400, error: { code: 'invalid_request', details: { index: 2 } } });
  // The fourth item sees the first: deduplicated onto it, corroborated by the new source.
  t.like(r[3], { status: 200, admitted: true, deduplicated: true, node_id: r[0].node_id });
  // The fifth sees the first's claim: admitted with a conflict.
  t.like(r[4], { status: 200, admitted: true, conflict_ids: [r[0].node_id] });
  t.like(r[5], { status: 200, admitted: true });
  t.like(r[6], { status: 200, replayed: true, node_id: r[5].node_id });
  t.like(r[7], { status: 409, error: { code: 'namespace_mode_mismatch' } });
  t.like(r[8], { status: 400, error: { code: 'invalid_request' } });

  const first = await h.call('GET', `/v1/namespaces/n/nodes/${r[0].node_id}`);
  t.is(first.status, 200);
  t.deepEqual([...first.body.source_ids].sort(), ['chat', 'ops']);
  const stats = (await h.call('GET', '/v1/stats')).body;
  t.like(stats, { nodes: 3 });

  // A storage failure inside an item's apply (a real SQLite error, raised by a trigger) undoes that
  // item's rows and leaves it as a pending intent, in the namespace the item itself created; the next
  // item is written. Reconciling later applies it from the stored intent (ADR 0025, 0202).
  const db = h.store.services.core.db;
  db.exec(`CREATE TRIGGER test_storage_failure BEFORE INSERT ON kn_versions WHEN NEW.content = 'the disk says no'
    BEGIN SELECT RAISE(ABORT, 'simulated storage failure'); END`);
  // A group runs its writes without savepoints first; a failure makes it run again with one per
  // write, from the same state (ADR 0208). After a group with a failing write the next one starts
  // guarded: a write that succeeds ends that, so the failing batch below starts unguarded.
  await h.write('other', { content: 'a write without failures', source_id: 'ops' });
  const reruns = h.store.services.core.commits.stats().reruns;
  const failing = await h.call('POST', '/v1/namespaces/fresh/write/batch', {
    writes: [
      { content: 'the disk says no', source_id: 'ops', request_id: 'fails-1' },
      { content: 'after it', source_id: 'ops' },
    ],
  });
  db.exec('DROP TRIGGER test_storage_failure');
  t.is(h.store.services.core.commits.stats().reruns, reruns + 1);
  const f = failing.body.results;
  t.like(f[0], { status: 503, error: { code: 'write_pending' } });
  t.like(f[1], { status: 200, admitted: true });
  t.deepEqual(db.prepare("SELECT count(*) AS n FROM kn_nodes WHERE request_id = 'fails-1'").get(), { n: 0 });
  const pending = (await h.call('GET', '/v1/namespaces/fresh/recovery/pending')).body.pending;
  t.deepEqual(
    pending.map((p: any) => [p.id, p.request_id, p.last_error]),
    [[f[0].error.details.pending_intent_id, 'fails-1', 'simulated storage failure']],
  );
  t.is((await h.call('POST', '/v1/namespaces/fresh/recovery/reconcile', { execute: true })).status, 200);
  const replay = await h.write('fresh', { content: 'the disk says no', source_id: 'ops', request_id: 'fails-1' });
  t.like(replay, { replayed: true });
  t.is((await h.call('GET', `/v1/namespaces/fresh/nodes/${replay.node_id}`)).body.content, 'the disk says no');
});

test('write/batch refuses malformed and oversized batches with 4xx error bodies, never 5xx', async (t) => {
  const h = await startHarness(t);
  const item = { content: 'c', source_id: 's' };
  const cases: [unknown, number, string][] = [
    [{}, 400, 'invalid_request'],
    [{ writes: [] }, 400, 'invalid_request'],
    [{ writes: 'nope' }, 400, 'invalid_request'],
    [{ writes: [item], extra: 1 }, 400, 'invalid_request'],
    [[item], 400, 'invalid_request'],
    [{ writes: Array.from({ length: 1001 }, () => item) }, 400, 'batch_too_large'],
  ];
  for (const [body, status, code] of cases) {
    const res = await h.call('POST', BATCH, body);
    t.is(res.status, status, JSON.stringify(body).slice(0, 80));
    t.is(res.body.error.code, code);
    t.is(typeof res.body.error.message, 'string');
    t.is(typeof res.body.error.details, 'object');
  }
  const bad = await fetch(h.store.url + BATCH, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"writes": [',
  });
  t.is(bad.status, 400);
  t.like(await bad.json(), { error: { code: 'invalid_json' } });
  // Nothing of the refused batches was written.
  t.is((await h.call('GET', '/v1/namespaces/n/recovery/pending')).status, 404);
});

test('write/batch takes 1,000 writes with 384-dimension vectors, above the single-request body limit', async (t) => {
  const h = await startHarness(t);
  const writes = Array.from({ length: 1000 }, (_, i) => ({
    content: `bulk item ${i}`,
    source_id: 'import',
    vector: Array.from({ length: 384 }, () => random() - 0.5),
  }));
  const res = await h.call('POST', BATCH, { writes });
  t.is(res.status, 200);
  t.is(res.body.results.length, 1000);
  t.true(res.body.results.every((r: any) => r.status === 200 && r.admitted === true));
  const stats = (await h.call('GET', '/v1/stats')).body;
  t.like(stats, { nodes: 1000, vectors_indexed: { 384: 1000 } });
  const [top] = await h.retrieve('n', { vector: writes[17]!.vector, top_k: 1 });
  t.is(top.id, res.body.results[17].node_id);
});

test('write/batch needs the write permission and stays inside the caller tenant', async (t) => {
  const h = await startHarness(t, { SVC_KNOWLEDGE_TOKENS: 'acme:read+write:acme-secret-1,acme:read:acme-reader-1' });
  const body = { writes: [{ content: 'c', source_id: 's' }] };
  t.is((await h.call('POST', BATCH, body)).status, 401);
  const reader = await h.call('POST', BATCH, body, 'acme:read:acme-reader-1');
  t.is(reader.status, 403);
  t.is(typeof reader.body.error.code, 'string');
  const writer = await h.call('POST', BATCH, body, 'acme:read+write:acme-secret-1');
  t.like(writer.body.results[0], { status: 200, admitted: true });
  t.is(
    (
      await h.call(
        'GET',
        `/v1/namespaces/n/nodes/${writer.body.results[0].node_id}`,
        undefined,
        'acme:read:acme-reader-1',
      )
    ).status,
    200,
  );
});

test('write/batch counts every item in /metrics and /v1/stats', async (t) => {
  const h = await startHarness(t);
  await h.call('POST', '/v1/namespaces/n/sources/label', { source_id: 'liar', credibility: 0 });
  await h.call('POST', BATCH, {
    writes: [
      { content: 'a', source_id: 's' },
      { content: 'b', source_id: 's' },
      { content: 'A', source_id: 't', dedup: true },
      { content: 'no', source_id: 'liar' },
      { content: 'x', source_id: 's', edges: [{ to: '00000000-0000-4000-8000-000000000000', type: 'rel' }] },
    ],
  });
  const text = (await h.admin('GET', '/metrics')).text;
  const families = parseExposition(text);
  const value = (labels: Record<string, string>) =>
    samplesOf(families, 'svc_knowledge_writes_total', { mode: 'general', ...labels })[0]?.value;
  t.is(value({ outcome: 'admitted' }), 2);
  t.is(value({ outcome: 'deduplicated' }), 1);
  t.is(value({ outcome: 'rejected' }), 1);
  t.is(value({ outcome: 'error' }), 1);
  // Every item that reached the write path observes the batch's latency.
  t.regex(text, /svc_knowledge_write_duration_seconds_count 5\n/);
  const stats = (await h.call('GET', '/v1/stats')).body;
  t.like(stats, { nodes: 2, ingest_total: 4, ingest_admitted: 3, ingest_rejected: 1 });
});

test('a batch commits as one group while no read comes, and in groups of 256 once a read came (ADR 0210)', async (t) => {
  const h = await startHarness(t);
  const commits = () => h.store.services.core.commits.stats();
  const batch = (from: number) =>
    h.call('POST', BATCH, {
      writes: Array.from({ length: 1000 }, (_, i) => ({ content: `grouped fact ${from + i}`, source_id: 'ops' })),
    });
  const before = commits();
  const quiet = await batch(0);
  t.is(quiet.status, 200);
  t.true(quiet.body.results.every((r: { status: number }) => r.status === 200));
  let after = commits();
  t.is(after.groups - before.groups, 1, 'no read came: the whole batch is one transaction');
  t.is(after.largestGroup, 1000);

  // A read (a retrieve) keeps the groups short for a while: the next batch runs in four groups.
  const found = await h.call('POST', '/v1/namespaces/n/retrieve', { text: 'grouped fact 7', top_k: 3 });
  t.is(found.status, 200);
  const mid = commits();
  const read = await batch(1000);
  t.is(read.status, 200);
  t.true(read.body.results.every((r: { status: number }) => r.status === 200));
  after = commits();
  t.is(after.groups - mid.groups, 4, 'reads came: groups of at most 256 writes');
  t.is(after.writes - mid.writes, 1000);
  // Every write of both batches is stored and found.
  const stats = await h.call('GET', '/v1/stats');
  t.is(stats.body.nodes, 2000);
  const last = await h.call('POST', '/v1/namespaces/n/retrieve', { text: 'grouped fact 1999', top_k: 1 });
  t.regex(JSON.stringify(last.body), /grouped fact 1999/);
});
