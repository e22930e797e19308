// tier: quick
import test from 'ava';
import { feedbackTerms } from '../../domain/knowledge/retrieval/pseudo-relevance.js';
import { analyze, tokenize } from '../../domain/knowledge/retrieval/text-analysis.js';

const doc = (text: string, score: number) => ({ words: tokenize(text), stems: analyze(text), score });

test('feedback words are weighted by their share of each document and the document score, without query or function words', (t) => {
  const terms = feedbackTerms(
    [
      doc('Ann: the kiln fired the glazed pottery', 2),
      doc('Ben: pottery glaze cracked in the kiln', 1),
      doc('Ann: gardens everywhere', 0.5),
    ],
    new Set(['kiln']),
    3,
  );
  t.deepEqual(
    terms.map((x) => x.stem),
    // ann: 2/2/7 + 0.5/2/3; glaze and potteri: 2/2/7 + 1/2/7 each (ties by stem).
    ['ann', 'glaze', 'potteri'],
  );
  t.is(terms[2]!.token, 'pottery', 'the written form finds the word in the text index');
  t.true(Math.abs(terms[0]!.weight - (1 / 7 + 0.25 / 3)) < 1e-12);
  t.true(Math.abs(terms[1]!.weight - (1 / 7 + 0.5 / 7)) < 1e-12);
  t.false(terms.some((x) => x.stem === 'the' || x.stem === 'kiln'));
});

test('no feedback from documents without a positive score or for a zero limit', (t) => {
  t.deepEqual(feedbackTerms([doc('pottery kiln', 0)], new Set(), 5), []);
  t.deepEqual(feedbackTerms([doc('pottery kiln', 1)], new Set(), 0), []);
});
