// tier: full
import test from 'ava';
import { startHarness } from './knowledge-harness.js';

test('admin healthz and metrics report ingest and retrieval counts and latency histograms', async (t) => {
  const h = await startHarness(t);
  t.deepEqual((await h.admin('GET', '/healthz')).body, { status: 'ok' });
  await h.write('n', { content: 'x', source_id: 's' });
  await h.retrieve('n', { text: 'x' });
  await h.call('POST', '/v1/namespaces/n/sources/label', { source_id: 'bad', credibility: 0 });
  await h.write('n', { content: 'y', source_id: 'bad' });
  const metrics = await h.admin('GET', '/metrics');
  t.is(metrics.status, 200);
  t.regex(metrics.text, /svc_knowledge_writes_total\{mode="general",outcome="admitted"\} 1/);
  t.regex(metrics.text, /svc_knowledge_writes_total\{mode="general",outcome="rejected"\} 1/);
  t.regex(metrics.text, /svc_knowledge_retrievals_total\{mode="general",outcome="ok"\} 1/);
  t.regex(metrics.text, /svc_knowledge_write_duration_seconds_bucket\{le="0\.005"\}/);
  t.regex(metrics.text, /svc_knowledge_retrieve_duration_seconds_count 1/);
});

test('admin explain-rank compares two nodes of a namespace', async (t) => {
  const h = await startHarness(t);
  const a = await h.write('n', { content: 'kubernetes runs the cluster', source_id: 's', confidence: 0.9 });
  const b = await h.write('n', { content: 'nomad runs the cluster', source_id: 's', confidence: 0.2 });
  const res = await h.admin('POST', '/admin/api/explain-rank', {
    namespace: 'n',
    node_id: b.node_id,
    other_node_id: a.node_id,
    text: 'cluster',
  });
  t.is(res.status, 200);
  t.is(res.body.winner_node_id, a.node_id);
  t.is(res.body.node.node_id, b.node_id);
  const confidence = res.body.factors.find((f: any) => f.factor === 'confidence');
  t.true(confidence.delta < 0);
  t.regex(res.body.summary, /outranks/);
  const rest = await h.call('POST', '/v1/namespaces/n/rank/explain', {
    node_id: b.node_id,
    other_node_id: a.node_id,
    text: 'cluster',
  });
  t.is(rest.status, 200);
  t.like(rest.body, {
    winner_node_id: a.node_id,
    loser_node_id: b.node_id,
    node: { node_id: b.node_id },
    other: { node_id: a.node_id },
  });
  t.deepEqual(
    rest.body.factors.map((f: any) => f.factor),
    res.body.factors.map((f: any) => f.factor),
  );
  t.is(
    (await h.admin('POST', '/admin/api/explain-rank', { node_id: a.node_id, other_node_id: b.node_id })).status,
    400,
  );
  t.is(
    (await h.admin('POST', '/admin/api/explain-rank', { namespace: 'n', node_id: a.node_id, other_node_id: a.node_id }))
      .status,
    400,
  );
  t.is(
    (
      await h.admin('POST', '/admin/api/explain-rank', {
        namespace: 'n',
        node_id: a.node_id,
        other_node_id: '11111111-1111-1111-1111-111111111111',
      })
    ).status,
    404,
  );
});

// Serial: a heap snapshot of this process stops its event loop, which other tests' requests must not share.
test.serial('admin profiling captures a CPU profile and a heap snapshot through the inspector', async (t) => {
  const h = await startHarness(t);
  const index = await h.admin('GET', '/debug/pprof/');
  t.deepEqual(
    index.body.profiles.map((p: any) => p.name),
    ['profile', 'heap'],
  );
  const profile = await h.admin('GET', '/debug/pprof/profile?seconds=0.2');
  t.is(profile.status, 200);
  t.regex(profile.headers.get('content-disposition') ?? '', /\.cpuprofile"/);
  t.true(Array.isArray(profile.body.nodes) && profile.body.nodes.length > 0);
  t.true(profile.body.endTime > profile.body.startTime);
  t.is((await h.admin('GET', '/debug/pprof/profile?seconds=999')).status, 400);
  const heap = await h.admin('GET', '/debug/pprof/heap');
  t.is(heap.status, 200);
  t.truthy(heap.body.snapshot?.meta);
});
