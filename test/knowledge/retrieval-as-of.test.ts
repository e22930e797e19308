// tier: quick
/**
 * What an as-of read reproduces (docs/adr/0224), and graph walks under the request's filters.
 */
import test from 'ava';
import { node, startReviewHarness } from './review-helpers.js';

const TURNS = [
  'Ann: I finally fired the pottery in the new kiln',
  'Ben: how did the glaze come out of the kiln?',
  'Ann: the glaze cracked, the clay was too wet',
  'Ben: dry the clay longer before the next firing',
  'Ann: my garden tomatoes are ripe this week',
  'Ben: the compost helped the tomatoes a lot',
  'Ann: I planted seedlings beside the tomatoes',
  'Ben: seedlings need water every morning in the garden',
];

function summary(results: any[]) {
  return results.map((r) => [
    r.id,
    r.version,
    r.score,
    r.similarity_score,
    r.confidence_score,
    r.recency_score,
    r.utility_score,
  ]);
}

test('a read with known_at and valid_at gets the same results and scores after later writes, updates, feedback and credibility changes', async (t) => {
  const h = await startReviewHarness(t, { SVC_KNOWLEDGE_THESAURUS: 'off' });
  const ids: string[] = [];
  for (let round = 0; round < 3; round++)
    for (const content of TURNS) {
      h.clock.now += 1_000;
      ids.push(await node(h, 'talk', { content: `${content} (${round})`, source_id: 'chat' }));
    }
  const cutoff = new Date(h.clock.now).toISOString();
  const request = { text: 'how did the glaze and the kiln work out?', top_k: 6, known_at: cutoff, valid_at: cutoff };
  const before = await h.retrieve('talk', request);
  t.true(before.length > 0);

  // After the cut-off: more turns with the query's words, a node's update, feedback, a credibility change.
  h.clock.advanceHours(1);
  for (const content of TURNS) await node(h, 'talk', { content: `${content} about the kiln glaze`, source_id: 'chat' });
  const found = before[0].id as string;
  for (const action of ['validate', 'useful']) {
    const res = await h.call('POST', `/v1/namespaces/talk/nodes/${found}/${action}`, { reason: 'checked' });
    t.is(res.status, 200, res.text);
  }
  const label = await h.call('POST', '/v1/namespaces/talk/sources/label', {
    source_id: 'chat',
    credibility: 0.95,
    reason: 'trusted',
  });
  t.is(label.status, 200, label.text);
  // Past every cache of the ranking's statistics (a minute).
  h.clock.advanceHours(2);

  const now = await h.retrieve('talk', { text: request.text, top_k: 6 });
  t.notDeepEqual(summary(now), summary(before), 'a current read sees the later rows');
  const again = await h.retrieve('talk', request);
  t.deepEqual(summary(again), summary(before));
});

test('a graph walk neither starts from nor passes through a node the request cannot see', async (t) => {
  const h = await startReviewHarness(t);
  const a = await node(h, 'g', { content: 'alpha station', source_id: 'survey' });
  const b = await node(h, 'g', { content: 'bravo relay', source_id: 'gossip' });
  const c = await node(h, 'g', { content: 'charlie outpost', source_id: 'survey' });
  const d = await node(h, 'g', { content: 'delta depot', source_id: 'survey' });
  for (const [from, to] of [
    [a, b],
    [b, c],
    [a, d],
  ] as const) {
    const res = await h.call('POST', `/v1/namespaces/g/nodes/${from}/edges`, { to, type: 'links', weight: 0.9 });
    t.is(res.status, 201, res.text);
  }
  const walk = async (body: Record<string, unknown>) =>
    (await h.retrieve('g', { top_k: 10, ...body })).map((r) => r.content).sort();
  t.deepEqual(await walk({ seed_ids: [a] }), ['bravo relay', 'charlie outpost', 'delta depot']);
  // bravo's only source is excluded: charlie, reached only through it, is not found either.
  t.deepEqual(await walk({ seed_ids: [a], exclude_source_ids: ['gossip'] }), ['delta depot']);
  t.deepEqual(await walk({ seed_ids: [b], exclude_source_ids: ['gossip'] }), [], 'an unseen seed starts no walk');
  t.deepEqual(await walk({ seed_ids: [a], include_source_ids: ['survey'] }), ['delta depot']);
});
