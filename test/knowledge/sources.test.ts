// tier: quick
import test from 'ava';
import { startHarness } from './knowledge-harness.js';

test('sources/label sets labels and credibility and the trust timeline records changes and retractions', async (t) => {
  const h = await startHarness(t);
  const labelled = await h.call('POST', '/v1/namespaces/n/sources/label', {
    source_id: 'wiki',
    labels: ['encyclopedia', 'crowd'],
    credibility: 0.7,
    reason: 'reviewed',
  });
  t.is(labelled.status, 200);
  t.like(labelled.body, { source_id: 'wiki', labels: ['crowd', 'encyclopedia'], credibility: 0.7 });
  await h.call('POST', '/v1/namespaces/n/sources/label', { source_id: 'wiki', labels: ['crowd'] });
  await h.call('POST', '/v1/namespaces/n/sources/label', { source_id: 'wiki', credibility: 0.3, reason: 'vandalism' });
  const w = await h.write('n', { content: 'claim', source_id: 'wiki' });
  await h.call('POST', `/v1/namespaces/n/nodes/${w.node_id}/retract-source`, { source_id: 'wiki', reason: 'reverted' });
  const trust = await h.call('GET', '/v1/namespaces/n/sources/wiki/trust');
  t.is(trust.status, 200);
  t.like(trust.body, { source_id: 'wiki', credibility: 0.3, labels: ['crowd'] });
  t.deepEqual(
    trust.body.timeline.map((p: any) => [p.action, p.source_credibility, p.previous_credibility, p.reason, p.node_id]),
    [
      ['label', 0.7, 0.6, 'reviewed', null],
      ['label', 0.3, 0.7, 'vandalism', null],
      ['retract', 0.3, 0.3, 'reverted', w.node_id],
    ],
  );
  t.regex(trust.body.timeline[0].tx_time, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
});

test('source credibility feeds the confidence component of ranking', async (t) => {
  const h = await startHarness(t);
  await h.call('POST', '/v1/namespaces/n/sources/label', { source_id: 'good', credibility: 0.9 });
  await h.call('POST', '/v1/namespaces/n/sources/label', { source_id: 'poor', credibility: 0.1 });
  await h.write('n', { content: 'from good', source_id: 'good', vector: [1, 0], confidence: 1 });
  await h.write('n', { content: 'from poor', source_id: 'poor', vector: [1, 0.5], confidence: 1 });
  const r = await h.retrieve('n', { vector: [1, 0.2] });
  const by = Object.fromEntries(r.map((x) => [x.content, x.confidence_score]));
  t.true(Math.abs(by['from good'] - 0.9) < 1e-12);
  t.true(Math.abs(by['from poor'] - 0.1) < 1e-12);
});

test('sources/label validates its body', async (t) => {
  const h = await startHarness(t);
  t.is((await h.call('POST', '/v1/namespaces/n/sources/label', { source_id: 's', credibility: 2 })).status, 400);
  t.is((await h.call('POST', '/v1/namespaces/n/sources/label', { credibility: 0.5 })).status, 400);
  const unknown = await h.call('GET', '/v1/namespaces/nope/sources/s/trust');
  t.is(unknown.status, 404);
});
