// tier: quick
import test from 'ava';
import { coverageBonus, type WeightedTerm } from '../../domain/knowledge/retrieval/lexical-scoring.js';
import { startHarness } from './knowledge-harness.js';

const counts = (...stems: string[]) => new Map(stems.map((s) => [s, 1]));
const terms: WeightedTerm[] = [
  { stem: 'hike', idf: 1, weight: 1 },
  { stem: 'trip', idf: 1, weight: 1 },
  { stem: 'lisbon', idf: 2, weight: 1 },
];

test('the coverage bonus grows with the share of the query words a document holds, squared, weighted by IDF', (t) => {
  t.is(coverageBonus(counts(), terms), 0);
  t.is(coverageBonus(counts('lisbon'), terms), (2 * 2) / 4);
  t.is(coverageBonus(counts('hike', 'trip'), terms), (2 * 2) / 4);
  t.is(coverageBonus(counts('hike', 'trip', 'lisbon', 'other'), terms), 4);
  t.is(coverageBonus(counts('hike'), []), 0);
});

test('a thesaurus expansion holds its query word at the expansion weight, and never adds to the total', (t) => {
  const withExpansions: WeightedTerm[] = [
    ...terms,
    { stem: 'walk', idf: 3, weight: 0.5, group: 'hike' },
    { stem: 'trek', idf: 1, weight: 0.5, group: 'hike' },
  ];
  // "walk" holds "hike" at 0.5 x 3; the better of two members counts, never both.
  t.is(coverageBonus(counts('walk', 'trek'), withExpansions), (1.5 * 1.5) / 4);
  // The word itself outweighs its expansion.
  t.is(coverageBonus(counts('walk', 'hike'), withExpansions), (1.5 * 1.5) / 4);
  t.is(coverageBonus(counts('trek', 'hike'), withExpansions), (1 * 1) / 4);
});

test('a turn holding more of the question words outranks one that repeats a single rarer word', async (t) => {
  const h = await startHarness(t, { SVC_KNOWLEDGE_THESAURUS: 'off' });
  const repeats = 'Ann: Lisbon, Lisbon, oh Lisbon, I dream of Lisbon';
  // Three of the four words, far enough apart to earn no proximity bonus.
  const covers = 'Ann: hiking was fun, we all liked the long quiet trip and then a lovely sunny weekend';
  await h.write('n', { content: repeats, source_id: 's' });
  await h.write('n', { content: covers, source_id: 's' });
  // Each of the three words is in three more turns, so that each is more common than "lisbon".
  for (const word of ['hiking', 'trip', 'weekend'])
    for (let i = 0; i < 3; i++) await h.write('n', { content: `Bob: ${word} number ${i}`, source_id: 's' });
  for (let i = 0; i < 3; i++) await h.write('n', { content: `Bob: the bakery ${i} closed early`, source_id: 's' });
  const results = await h.retrieve('n', { text: 'Lisbon hiking trip weekend', top_k: 3 });
  t.is(results[0].content, covers);
  t.is(results[1].content, repeats);
});
