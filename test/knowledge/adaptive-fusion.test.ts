// tier: quick
import test from 'ava';
import { COVERAGE_SHIFT, fuseLists, fusionWeights } from '../../domain/knowledge/retrieval/fusion.js';

const lists = (coverage: number) => {
  const w = fusionWeights(coverage);
  return fuseLists([
    {
      path: 'vector',
      weight: w.vector,
      items: [
        { key: 'v', similarity: 0.9 },
        { key: 't', similarity: 0.8 },
      ],
    },
    {
      path: 'text',
      weight: w.text,
      items: [
        { key: 't', similarity: 1 },
        { key: 'x', similarity: 0.6 },
        { key: 'v', similarity: 0.2 },
      ],
    },
  ]);
};

test('hybrid weights move from even towards text as the text path covers more of the query', (t) => {
  t.deepEqual(fusionWeights(0), { text: 0.5, vector: 0.5 });
  const full = fusionWeights(1);
  t.true(Math.abs(full.text - (0.5 + COVERAGE_SHIFT)) < 1e-12);
  t.true(Math.abs(full.text + full.vector - 1) < 1e-12);
  // Out-of-range coverage is clamped.
  t.deepEqual(fusionWeights(-1), fusionWeights(0));
  t.deepEqual(fusionWeights(3), fusionWeights(1));
});

test('with no coverage the kinds count alike; with full coverage the text order decides a split vote', (t) => {
  const even = new Map(lists(0).map((f) => [f.key, f.similarity]));
  // v: vector 1, text 0; t: vector 0, text 1: a tie at even weights.
  t.true(Math.abs(even.get('v')! - even.get('t')!) < 1e-12);
  const covered = new Map(lists(1).map((f) => [f.key, f.similarity]));
  t.true(covered.get('t')! > covered.get('v')!);
  t.true(covered.get('x')! > covered.get('v')!, 'a text-only match outranks a vector-only one');
  for (const f of lists(1)) t.true(f.similarity >= 0 && f.similarity <= 1);
});

test('lists without a weight are averaged evenly, as before', (t) => {
  const fused = fuseLists([
    {
      path: 'vector',
      items: [
        { key: 'a', similarity: 0.9 },
        { key: 'b', similarity: 0.8 },
      ],
    },
    {
      path: 'text',
      items: [
        { key: 'b', similarity: 1 },
        { key: 'c', similarity: 0.5 },
      ],
    },
  ]);
  const sim = new Map(fused.map((f) => [f.key, f.similarity]));
  t.is(sim.get('a'), 0.5);
  t.is(sim.get('b'), 0.5);
});
