/**
 * Pseudo-relevance feedback (RM3-style, docs/adr/0225): the best first-pass candidates lend their
 * words to the query. Each word's weight is its share of each lending document's tokens, weighted by
 * that document's score relative to the best. Pure functions.
 */
import { isStopStem } from './text-analysis.js';

/** One lending document: its tokens as written and as stemmed (the same length), and its score. */
export interface FeedbackDocument {
  readonly words: readonly string[];
  readonly stems: readonly string[];
  readonly score: number;
}

/** A word the feedback adds: its stem, one written form of it (for the text index), its weight. */
export interface FeedbackTerm {
  readonly stem: string;
  readonly token: string;
  readonly weight: number;
}

/** The `limit` heaviest words of `docs`, none of `exclude`, no function word, none under 3 letters. */
export function feedbackTerms(
  docs: readonly FeedbackDocument[],
  exclude: ReadonlySet<string>,
  limit: number,
): FeedbackTerm[] {
  const best = Math.max(0, ...docs.map((d) => d.score));
  if (best <= 0 || limit <= 0) return [];
  const weights = new Map<string, { token: string; weight: number }>();
  for (const doc of docs) {
    if (doc.stems.length === 0) continue;
    const share = doc.score / best / doc.stems.length;
    doc.stems.forEach((stem, i) => {
      if (exclude.has(stem) || isStopStem(stem) || stem.length < 3 || !/^\p{L}+$/u.test(stem)) return;
      const entry = weights.get(stem);
      if (entry) entry.weight += share;
      else weights.set(stem, { token: doc.words[i] ?? stem, weight: share });
    });
  }
  return [...weights.entries()]
    .map(([stem, { token, weight }]) => ({ stem, token, weight }))
    .sort((a, b) => b.weight - a.weight || (a.stem < b.stem ? -1 : 1))
    .slice(0, limit);
}
