/**
 * Lexical relevance over stemmed tokens: BM25 with per-term weights and a term-proximity bonus.
 * Pure functions (docs/adr/0023-lexical-retrieval.md).
 */

/** BM25 parameters: the usual k1; b below the usual 0.75, for short turns (docs/adr/0179). */
export const BM25_K1 = 1.2;
export const BM25_B = 0.5;

/** Largest gap (in tokens) at which two query terms still count as near each other. */
export const PROXIMITY_WINDOW = 5;

/**
 * A weighted query term: its stem, its IDF and how much it counts (1 for the user's own words).
 * Terms sharing a `group` stand for one query word (the word and its thesaurus expansions): a
 * document earns the best of them, not their sum, so synonyms never stack (Indri's `#syn` idea).
 */
export interface WeightedTerm {
  readonly stem: string;
  readonly idf: number;
  readonly weight: number;
  /** The query word this term stands for; @default the term's own stem. */
  readonly group?: string;
}

/** Okapi IDF of a term found in `df` of `n` documents (never negative). */
export function idf(df: number, n: number): number {
  return Math.log(1 + (Math.max(n, df) - df + 0.5) / (df + 0.5));
}

/** Term counts of a token list. */
export function termCounts(tokens: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const t of tokens) counts.set(t, (counts.get(t) ?? 0) + 1);
  return counts;
}

/** BM25 of one document (its stems and their counts) for weighted terms; `avgLength` in tokens. */
export function bm25(
  docLength: number,
  counts: ReadonlyMap<string, number>,
  terms: readonly WeightedTerm[],
  avgLength: number,
  k1 = BM25_K1,
  b = BM25_B,
): number {
  const norm = k1 * (1 - b + b * (docLength / Math.max(1, avgLength)));
  const best = new Map<string, number>();
  for (const term of terms) {
    const tf = counts.get(term.stem) ?? 0;
    if (tf === 0) continue;
    const value = term.weight * term.idf * ((tf * (k1 + 1)) / (tf + norm));
    const group = term.group ?? term.stem;
    if (value > (best.get(group) ?? 0)) best.set(group, value);
  }
  let score = 0;
  for (const value of best.values()) score += value;
  return score;
}

/** The largest BM25 a document could get from `terms` alone (every tf saturated): a MaxScore bound. */
export function bm25UpperBound(terms: readonly WeightedTerm[]): number {
  return terms.reduce((sum, t) => sum + t.weight * t.idf * (BM25_K1 + 1), 0);
}

/**
 * Term-proximity bonus (after Rasolofo and Savoy, 2003): every pair of distinct query terms that
 * occur within `PROXIMITY_WINDOW` tokens adds 1/d², and each pair's total is saturated like a
 * BM25 term frequency and weighted by the smaller IDF of the two.
 */
export function proximity(tokens: readonly string[], terms: readonly WeightedTerm[]): number {
  if (terms.length < 2) return 0;
  const byStem = new Map(terms.map((t) => [t.stem, t]));
  const positions: { stem: string; at: number }[] = [];
  tokens.forEach((t, at) => {
    if (byStem.has(t)) positions.push({ stem: t, at });
  });
  const pairs = new Map<string, { a: WeightedTerm; b: WeightedTerm; tpi: number }>();
  for (let i = 0; i < positions.length; i++) {
    for (let j = i + 1; j < positions.length; j++) {
      const d = positions[j]!.at - positions[i]!.at;
      if (d > PROXIMITY_WINDOW) break;
      const x = positions[i]!.stem;
      const y = positions[j]!.stem;
      if (x === y) continue;
      const key = x < y ? `${x}\u0000${y}` : `${y}\u0000${x}`;
      const pair = pairs.get(key) ?? { a: byStem.get(x)!, b: byStem.get(y)!, tpi: 0 };
      pair.tpi += 1 / (d * d);
      pairs.set(key, pair);
    }
  }
  let bonus = 0;
  for (const { a, b, tpi } of pairs.values()) {
    bonus += Math.min(a.weight * a.idf, b.weight * b.idf) * ((tpi * (BM25_K1 + 1)) / (tpi + BM25_K1));
  }
  return bonus;
}

/** Weight of {@link coverageBonus} in a lexical score (docs/adr/0225). */
export const COVERAGE_WEIGHT = 2;

/**
 * Coverage bonus: the IDF of the query words a document holds, times the share of the query's IDF
 * that is, so that a document holding more of the distinct words outranks one repeating a few. A
 * word is held through itself or through a term of its group (a thesaurus expansion, at the
 * expansion's weight); the query's words are the terms without a group or whose group is their stem.
 */
export function coverageBonus(counts: ReadonlyMap<string, number>, terms: readonly WeightedTerm[]): number {
  let total = 0;
  const held = new Map<string, number>();
  for (const t of terms) {
    const group = t.group ?? t.stem;
    if (group === t.stem) total += t.weight * t.idf;
    if (!counts.has(t.stem)) continue;
    const value = t.weight * t.idf;
    if (value > (held.get(group) ?? 0)) held.set(group, value);
  }
  let sum = 0;
  for (const value of held.values()) sum += value;
  return total > 0 ? (sum * sum) / total : 0;
}
