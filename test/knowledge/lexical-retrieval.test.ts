// tier: full
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import { startHarness } from './knowledge-harness.js';

const contents = (results: readonly any[]) => results.map((r) => r.content as string);

test('text retrieval matches other forms of a word through Porter stemming', async (t) => {
  const h = await startHarness(t);
  await h.write('n', { content: 'Ann: we are adopting a kitten next week', source_id: 's' });
  await h.write('n', { content: 'Ann: the weather is nice', source_id: 's' });
  t.deepEqual(contents(await h.retrieve('n', { text: 'adopted' })), ['Ann: we are adopting a kitten next week']);
});

test('text retrieval ignores function words, so a natural question ranks the turn that answers it first', async (t) => {
  const h = await startHarness(t);
  await h.write('n', { content: 'Melanie: what did you do all day? did you see what the kids did?', source_id: 's' });
  await h.write('n', { content: 'Melanie: what a day, what a week, what did I even do', source_id: 's' });
  await h.write('n', { content: 'Melanie: we adopted a puppy from the shelter', source_id: 's' });
  const results = await h.retrieve('n', { text: 'What did Melanie adopt?', top_k: 3 });
  t.is(results[0].content, 'Melanie: we adopted a puppy from the shelter');
});

test('text candidates are the best-matching rows, not the newest ones', async (t) => {
  const h = await startHarness(t);
  // The answer is written first; 250 newer rows share the common word only.
  await h.write('n', { content: 'the orchard report names the drought as the cause', source_id: 's' });
  for (let i = 0; i < 250; i++) await h.write('n', { content: `weekly report number ${i}`, source_id: 's' });
  const results = await h.retrieve('n', { text: 'drought report', top_k: 5 });
  t.is(results[0].content, 'the orchard report names the drought as the cause');
  t.is(results.length, 5);
  t.true(results[0].similarity_score > results[1].similarity_score);
});

test('a thesaurus expansion finds a turn in other words, below a turn in the same words', async (t) => {
  const h = await startHarness(t);
  await h.write('n', { content: 'Ann: we adopted a puppy from the shelter', source_id: 's' });
  await h.write('n', { content: 'Ann: my neighbor walks her dog at night', source_id: 's' });
  await h.write('n', { content: 'Ann: I flew to Lisbon in May', source_id: 's' });
  await h.write('n', { content: 'Ann: the bakery closed early', source_id: 's' });
  const dog = contents(await h.retrieve('n', { text: 'dog' }));
  t.deepEqual(dog, ['Ann: my neighbor walks her dog at night', 'Ann: we adopted a puppy from the shelter']);
  // An irregular form counts as the word itself.
  t.deepEqual(contents(await h.retrieve('n', { text: 'where did she fly' })), ['Ann: I flew to Lisbon in May']);
  const backends = (await h.call('GET', '/v1/backends')).body;
  t.is(backends.text.thesaurus, 'wordnet-3.1');
});

test('text retrieval without a thesaurus matches only the query words', async (t) => {
  const h = await startHarness(t, { SVC_KNOWLEDGE_THESAURUS: 'off' });
  await h.write('n', { content: 'Ann: we adopted a puppy from the shelter', source_id: 's' });
  await h.write('n', { content: 'Ann: my neighbor walks her dog at night', source_id: 's' });
  t.deepEqual(contents(await h.retrieve('n', { text: 'dog' })), ['Ann: my neighbor walks her dog at night']);
  t.is((await h.call('GET', '/v1/backends')).body.text.thesaurus, 'none');
});

test('SVC_KNOWLEDGE_THESAURUS refuses a value other than wordnet or off', async (t) => {
  await t.throwsAsync(startHarness(t, { SVC_KNOWLEDGE_THESAURUS: 'roget' }), {
    message: /SVC_KNOWLEDGE_THESAURUS.*"roget" is not wordnet or off/,
  });
});

/** A deterministic local embedder: bag of words hashed into 32 dimensions, unit length. */
async function hashingEmbedder(t: ExecutionContext): Promise<string> {
  const embed = (text: string) => {
    const v = new Array<number>(32).fill(0);
    for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
      let h = 0;
      for (const ch of word) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
      v[h % 32]! += 1;
    }
    const norm = Math.hypot(...v) || 1;
    return v.map((x) => x / norm);
  };
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const input = JSON.parse(raw).input as string[];
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          object: 'list',
          data: input.map((text, index) => ({ object: 'embedding', index, embedding: embed(text) })),
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

test('hybrid retrieval fuses the lexical and vector paths, ranking a node both found first', async (t) => {
  const h = await startHarness(t, {
    SVC_KNOWLEDGE_EMBEDDER_URL: await hashingEmbedder(t),
    SVC_KNOWLEDGE_THESAURUS: 'off',
  });
  await h.write('n', { content: 'zebra crossing near the station', source_id: 's' });
  await h.write('n', { content: 'zebra', source_id: 's' });
  await h.write('n', { content: 'station', source_id: 's' });
  await h.write('n', { content: 'unrelated words entirely', source_id: 's' });
  const results = await h.retrieve('n', { text: 'zebra station', top_k: 4 });
  t.is(results[0].content, 'zebra crossing near the station');
  t.is(results[0].retrieval_source, 'text+vector');
  t.true(results.every((r) => Math.abs(r.score_breakdown.similarity - 0.4 * r.similarity_score) < 1e-12));
  // Single-word nodes are nearer by cosine but found by one path each: they rank below.
  t.deepEqual(contents(results.slice(1, 3)).sort(), ['station', 'zebra']);
  t.true(results.every((r) => r.similarity_score >= 0 && r.similarity_score <= 1));
});

test('confidence re-orders equally relevant text matches but does not lift a weak match over a strong one', async (t) => {
  const h = await startHarness(t, { SVC_KNOWLEDGE_THESAURUS: 'off' });
  await h.write('n', { content: 'the drought ruined the orchard harvest', source_id: 's', confidence: 0.4 });
  await h.write('n', { content: 'the drought ruined the orchard harvest again', source_id: 's', confidence: 0.95 });
  await h.write('n', { content: 'an orchard', source_id: 's', confidence: 1 });
  const results = await h.retrieve('n', { text: 'drought orchard harvest' });
  t.deepEqual(contents(results), [
    'the drought ruined the orchard harvest again',
    'the drought ruined the orchard harvest',
    'an orchard',
  ]);
  t.true(
    results[0].similarity_score < results[1].similarity_score,
    'the longer twin is a little less relevant, and more confident',
  );
});
