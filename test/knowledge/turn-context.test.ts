// tier: quick
import test from 'ava';
import { CONTEXT_WEIGHT, isCoherent, withContext } from '../../domain/knowledge/retrieval/turn-context.js';
import { startHarness } from './knowledge-harness.js';

const TOPICS = ['pottery', 'garden', 'guitar', 'marathon', 'bakery', 'camping', 'chess', 'painting', 'novel', 'kayak'];
const QUESTION = 'Ann: what did you name the new puppy?';
const ANSWER = 'Ben: Biscuit, after my favourite snack';

/** A conversation whose adjacent turns share their topic, with the puppy exchange in the middle. */
function conversation(): string[] {
  const turns: string[] = [];
  TOPICS.forEach((topic, i) => {
    if (i === TOPICS.length / 2) turns.push(QUESTION, ANSWER);
    turns.push(`Ann: how is the ${topic} going?`, `Ben: the ${topic} is going well, thanks for asking`);
  });
  return turns;
}

/** Unrelated notes: neighbours share no more words than notes far apart; the puppy exchange in the middle. */
function notes(): string[] {
  const turns = Array.from(
    { length: 2 * TOPICS.length },
    (_, i) => `${i % 2 === 0 ? 'Ann' : 'Ben'}: note ${i}: the ${TOPICS[i % TOPICS.length]} kit is stored in box ${i}`,
  );
  turns.splice(TOPICS.length, 0, QUESTION, ANSWER);
  return turns;
}

test('write order carries topic when adjacent writes share more words than distant ones', (t) => {
  t.true(isCoherent(conversation()));
  t.false(isCoherent(notes()));
  t.false(isCoherent(conversation().slice(0, 19)), 'too few writes to tell');
});

test('a turn earns a share of its best neighbour score, never its sum', (t) => {
  t.is(withContext(2, []), 2);
  t.is(withContext(2, [1, 4, 3]), 2 + CONTEXT_WEIGHT * 4);
  t.is(withContext(0, [0, 0]), 0);
});

test('in a conversation, the turn after the question words is found through its neighbour', async (t) => {
  const h = await startHarness(t, { SVC_KNOWLEDGE_THESAURUS: 'off' });
  // Another namespace's writes interleave: neighbours are taken within the namespace only.
  for (const [i, content] of conversation().entries()) {
    await h.write('talk', { content, source_id: 's' });
    await h.write('other', { content: `Ben: the puppy ate biscuit number ${i}`, source_id: 's' });
  }
  const results = await h.retrieve('talk', { text: 'What name did they give the puppy?', top_k: 3 });
  t.is(results[0].content, QUESTION);
  t.true(
    results.some((r) => r.content === ANSWER),
    JSON.stringify(results.map((r) => r.content)),
  );
  t.true(results.every((r) => r.similarity_score >= 0 && r.similarity_score <= 1));
});

test('among unrelated notes, a neighbour is no context: only turns with the query words are found', async (t) => {
  const h = await startHarness(t, { SVC_KNOWLEDGE_THESAURUS: 'off' });
  for (const content of notes()) await h.write('notes', { content, source_id: 's' });
  const results = await h.retrieve('notes', { text: 'What name did they give the puppy?', top_k: 3 });
  t.deepEqual(
    results.map((r) => r.content),
    [QUESTION],
  );
});

test('a retracted neighbour gives no context', async (t) => {
  const h = await startHarness(t, { SVC_KNOWLEDGE_THESAURUS: 'off' });
  let question = '';
  for (const content of conversation()) {
    const res = await h.write('talk', { content, source_id: 's' });
    if (content === QUESTION) question = res.node_id as string;
  }
  const before = await h.retrieve('talk', { text: 'puppy', top_k: 5 });
  t.true(before.some((r) => r.content === ANSWER));
  const retract = await h.call('POST', `/v1/namespaces/talk/nodes/${question}/retract-source`, {
    source_id: 's',
    reason: 'test',
  });
  t.is(retract.status, 204, retract.text);
  t.deepEqual(await h.retrieve('talk', { text: 'puppy', top_k: 5 }), []);
});
