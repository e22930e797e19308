// tier: quick
import test from 'ava';
import fc from 'fast-check';
import {
  scoreCandidate,
  recencyScore,
  corroboration,
  confidenceScore,
} from '../../domain/knowledge/retrieval/scoring.js';
import { DEFAULT_WEIGHTS, defaultCandidateK, RECENCY_ALPHA } from '../../domain/knowledge/modes.js';
import { fuseLists, RRF_K } from '../../domain/knowledge/retrieval/fusion.js';
import { parseLexicalQuery, satisfiesLiterals, termCoverage } from '../../domain/knowledge/retrieval/lexical-query.js';
import { matchesFilter } from '../../domain/knowledge/retrieval/search-filter.js';
import { DimensionIndex } from '../../knowledge/retrieve/vector-index.js';

test('scoreCandidate breakdown sums to the score within 1e-9 for any weights and components', (t) => {
  const unit = fc.double({ min: 0, max: 1, noNaN: true });
  const weight = fc.double({ min: 0, max: 100, noNaN: true });
  fc.assert(
    fc.property(unit, unit, unit, unit, weight, weight, weight, weight, (s, c, r, u, ws, wc, wr, wu) => {
      const score = scoreCandidate(
        { similarity: s, confidence: c, recency: r, utility: u },
        { similarity: ws, confidence: wc, recency: wr, utility: wu },
      );
      const b = score.breakdown;
      return Math.abs(b.similarity + b.confidence + b.recency + b.utility - score.score) < 1e-9;
    }),
  );
  t.pass();
});

test('default weights per mode sum to one and candidate_k is max(4 top_k, 50)', (t) => {
  for (const w of Object.values(DEFAULT_WEIGHTS))
    t.true(Math.abs(w.similarity + w.confidence + w.recency + w.utility - 1) < 1e-12);
  t.is(defaultCandidateK(10), 50);
  t.is(defaultCandidateK(20), 80);
});

test('recencyScore decays by memory type and corroboration is a noisy-OR', (t) => {
  t.is(recencyScore(0, 'episodic'), 1);
  t.true(Math.abs(recencyScore(3_600_000 * 10, 'semantic') - Math.exp(-RECENCY_ALPHA.semantic * 10)) < 1e-12);
  t.true(recencyScore(3_600_000, 'working') < recencyScore(3_600_000, undefined));
  t.is(recencyScore(-5, 'procedural'), 1);
  t.is(corroboration([]), 0);
  t.true(Math.abs(corroboration([0.5, 0.5]) - 0.75) < 1e-12);
  t.true(Math.abs(confidenceScore(0.8, [0.5]) - 0.4) < 1e-12);
});

test('fuseLists orders by reciprocal rank fusion and keeps the best similarity of one kind of path', (t) => {
  const fused = fuseLists([
    {
      path: 'vectors',
      items: [
        { key: 'a', similarity: 0.9 },
        { key: 'b', similarity: 0.8 },
      ],
    },
    {
      path: 'vectors',
      items: [
        { key: 'b', similarity: 0.7 },
        { key: 'c', similarity: 0.6 },
      ],
    },
  ]);
  t.deepEqual(
    fused.map((f) => f.key),
    ['b', 'a', 'c'],
  );
  t.true(Math.abs(fused[0]!.rrf - (1 / (RRF_K + 2) + 1 / (RRF_K + 1))) < 1e-12);
  t.is(fused[0]!.similarity, 0.8);
  t.deepEqual(fused[0]!.paths, ['vectors']);
});

test('fuseLists averages min-max normalized similarities when text and vector mix', (t) => {
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
  // b: vector (0.8 - 0.8) / 0.1 = 0, text (1 - 0.5) / 0.5 = 1; a: vector 1, no text; c: text 0.
  t.is(sim.get('b'), 0.5);
  t.is(sim.get('a'), 0.5);
  t.is(sim.get('c'), 0);
  t.deepEqual(fused.find((f) => f.key === 'b')!.paths, ['vector', 'text']);
  // A kind with a single candidate (no range) counts it fully.
  t.is(
    fuseLists([
      { path: 'vector', items: [{ key: 'x', similarity: 0.3 }] },
      { path: 'text', items: [{ key: 'x', similarity: 1 }] },
    ])[0]!.similarity,
    1,
  );
});

test('parseLexicalQuery makes identifiers and quoted phrases required literals and drops function words', (t) => {
  const q = parseLexicalQuery('why did "payment gateway" fail with ERR-4021?');
  t.deepEqual(q.literals, ['payment gateway', 'err-4021']);
  t.deepEqual(q.terms, [{ token: 'fail', stem: 'fail' }]);
  t.is(q.match, '"payment gateway" AND "err 4021" AND ("fail" OR "payment gateway")');
  t.true(satisfiesLiterals('The Payment Gateway hit err-4021', q.literals));
  t.false(satisfiesLiterals('payment gateway hit err 4021', q.literals));
  t.is(parseLexicalQuery('   ').match, undefined);
  t.is(parseLexicalQuery('a "b" OR NEAR(x) c*').match, '"b" AND ("near" OR "x" OR "c" OR "b")');
  t.is(termCoverage('the fox', parseLexicalQuery('fox dog')), 0.5);
  t.deepEqual(
    parseLexicalQuery('What did Melanie adopt?').terms.map((x) => x.stem),
    ['melani', 'adopt'],
  );
  // A question of function words only still searches them.
  t.deepEqual(
    parseLexicalQuery('who is it').terms.map((x) => x.token),
    ['who', 'is', 'it'],
  );
});

test('matchesFilter combines predicates with and, or and not', (t) => {
  const node = {
    content: 'Hello World',
    similarity: 0.5,
    validFrom: 10,
    validTo: Number.POSITIVE_INFINITY,
    edges: [{ to: 'x', type: 'cites', weight: 0.4 }],
    sourceCredibilities: [0.3, 0.9],
  };
  t.true(matchesFilter(node, { contentContains: 'world', similarityMin: 0.5 }));
  t.false(matchesFilter(node, { hasEdgeTo: 'x', edgeWeightMin: 0.5 }));
  t.true(matchesFilter(node, { or: [{ hasEdgeTo: 'y' }, { edgeTypes: ['cites'] }] }));
  t.false(matchesFilter(node, { not: { validAt: 20 } }));
  t.true(matchesFilter(node, { sourceCredibilityMin: 0.8, sourceCredibilityMax: 1 }));
  t.false(matchesFilter(node, { sourceCredibilityMin: 0.4, sourceCredibilityMax: 0.8 }));
  t.true(matchesFilter(node, { and: [{ validFromBefore: 11 }, { validToAfter: 1e15 }] }));
});

test('DimensionIndex finds exact neighbours among filtered rows and follows transaction-time closes', (t) => {
  const index = new DimensionIndex(64);
  const rand = mulberry(7);
  const vectors: number[][] = [];
  for (let i = 1; i <= 3000; i++) {
    const v = Array.from({ length: 64 }, () => rand() * 2 - 1);
    vectors.push(v);
    index.add(i, v, { nsId: i % 2, validFrom: 0, validTo: 1e15, txFrom: 0, txTo: 1e15, retracted: false });
  }
  const q = Float32Array.from(vectors[10]!);
  const norm = Math.hypot(...q);
  const unit = q.map((x) => x / norm);
  const hits = index.search(
    unit,
    5,
    { nsId: 11 % 2, validAt: 1, knownAt: 1, includeRetracted: false },
    { rescore: 3000 },
  );
  t.is(hits[0]!.vid, 11);
  t.true(hits.every((h) => h.vid % 2 === 1));
  index.closeTx(11, 5);
  t.not(index.search(unit, 1, { nsId: 1, validAt: 1, knownAt: 6, includeRetracted: false })[0]!.vid, 11);
  t.is(index.search(unit, 1, { nsId: 1, validAt: 1, knownAt: 4, includeRetracted: false })[0]!.vid, 11);
});

function mulberry(seed: number): () => number {
  let a = seed;
  return () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}
