/**
 * The lexical retrieval path (docs/adr/0023-lexical-retrieval.md):
 * 1. the query's selective terms find candidates in FTS5's bm25 order; very common terms only rank;
 * 2. a thesaurus, when configured, adds related words at a lower weight (`flew` for `fly`, `buy`
 *    for `purchase`, `puppy` for `dog`), which find candidates of their own;
 * 3. every candidate is re-scored in process: BM25 over Porter stems with per-term weights, plus a
 *    term-proximity bonus for the query's own words;
 * 4. in namespaces whose write order carries topic (a recorded conversation), each candidate also earns
 *    part of its best neighbouring write's score, and the neighbours of the best candidates become
 *    candidates (docs/adr/0179); similarity is the score over the best one.
 */
import {
  matchExpression,
  parseLexicalQuery,
  satisfiesLiterals,
  type LexicalQuery,
  type QueryTerm,
} from '../../domain/knowledge/retrieval/lexical-query.js';
import {
  bm25,
  coverageBonus,
  bm25UpperBound,
  proximity,
  termCounts,
  type WeightedTerm,
} from '../../domain/knowledge/retrieval/lexical-scoring.js';
import { analyze, isStopword, stem, tokenize } from '../../domain/knowledge/retrieval/text-analysis.js';
import { expansionWeight, type Thesaurus } from '../../domain/knowledge/retrieval/thesaurus.js';
import { CONTEXT_SEEDS, withContext } from '../../domain/knowledge/retrieval/turn-context.js';
import { DEFAULT_LEXICAL_TUNING, type LexicalTuning } from '../../domain/knowledge/retrieval/lexical-tuning.js';
import { feedbackTerms } from '../../domain/knowledge/retrieval/pseudo-relevance.js';
import type { ViewStatistics } from './term-statistics.js';

/** A term in more than this share of all text rows is "common": it ranks but does not find candidates. */
const COMMON_FRACTION = 0.05;
/** ... unless it is in fewer rows than this, when reading its doclist is cheap anyway. */
const COMMON_MIN_ROWS = 2_000;
const MAX_CAP = 20_000;

/** What the path needs from the retrieval around it. */
export interface LexicalContext {
  /** FTS5 search of one namespace: version ids by bm25 (`rank`) or newest first (`newest`). */
  search(match: string, cap: number, order: 'rank' | 'newest'): number[];
  /** The ids among `vids` that pass the request's filters, in the order given. */
  accept(vids: readonly number[]): number[];
  /** Content of an accepted version. */
  content(vid: number): string;
  /**
   * The writes the request may see just before and after an accepted version in its namespace, at
   * most `reach` on each side, nearest first; absent, no neighbouring context is used.
   */
  neighbours?(vid: number, reach: number): { vid: number; content: string }[];
  /** Corpus statistics over the rows the request may see. */
  readonly stats: ViewStatistics;
}

/** Options of one lexical search. */
export interface LexicalSearchOptions {
  readonly candidateK: number;
  /** Thesaurus expansion (default true when a thesaurus is configured). */
  readonly expand?: boolean;
}

/** Lexical candidates and how well the best of them covers the query's own words. */
export interface LexicalResult {
  /** Candidates with a similarity in [0, 1], best first. */
  readonly items: { key: string; similarity: number }[];
  /** The largest IDF-weighted share of the query's own words that one candidate holds, in [0, 1]. */
  readonly coverage: number;
}

interface Analyzed {
  readonly tokens: readonly string[];
  readonly counts: ReadonlyMap<string, number>;
}

/** Lexical candidates with a similarity in [0, 1] (weighted BM25 and proximity, relative to the best). */
export class LexicalPath {
  readonly #thesaurus: Thesaurus | undefined;
  readonly #tuning: LexicalTuning;

  constructor(thesaurus?: Thesaurus, tuning: Partial<LexicalTuning> = {}) {
    this.#thesaurus = thesaurus;
    this.#tuning = { ...DEFAULT_LEXICAL_TUNING, ...tuning };
  }

  search(text: string, options: LexicalSearchOptions, ctx: LexicalContext): LexicalResult {
    const query = parseLexicalQuery(text);
    if (query.match === undefined) return { items: [], coverage: 0 };
    const { candidateK } = options;
    const stats = ctx.stats;
    const commonLimit = Math.max(COMMON_FRACTION * stats.rows(), COMMON_MIN_ROWS);
    const isCommon = (t: QueryTerm) => stats.documentFrequency(t) > commonLimit;
    const selective = query.terms.filter((t) => !isCommon(t));
    const common = query.terms.filter((t) => isCommon(t));
    const original = weightedTerms(query, (t) => stats.idf(t));
    const expansions =
      this.#thesaurus && options.expand !== false ? this.#expansions(query, original, commonLimit, stats) : [];
    let allTerms = [...original, ...expansions.map((e) => e.term)];
    const covered = allTerms;
    const tuning = this.#tuning;

    const analyzed = new Map<number, Analyzed>();
    const analyzeVid = (vid: number, content?: string): Analyzed => {
      let a = analyzed.get(vid);
      if (!a) {
        const tokens = analyze(content ?? ctx.content(vid));
        a = { tokens, counts: termCounts(tokens) };
        analyzed.set(vid, a);
      }
      return a;
    };
    const collectAccepted = (vids: readonly number[]) =>
      ctx.accept(vids).filter((v) => satisfiesLiterals(ctx.content(v), query.literals));
    const collect = (match: string | undefined, order: 'rank' | 'newest'): number[] => {
      if (match === undefined) return [];
      let cap = Math.max(2 * candidateK, 100);
      for (;;) {
        const vids = ctx.search(match, cap, order);
        const accepted = collectAccepted(vids);
        if (accepted.length >= candidateK || vids.length < cap || cap >= MAX_CAP) return accepted;
        cap = Math.min(cap * 4, MAX_CAP);
      }
    };
    const avgLength = stats.averageLength();
    const scoreText = (a: Analyzed) =>
      bm25(a.tokens.length, a.counts, allTerms, avgLength, tuning.k1, tuning.b) +
      proximity(a.tokens, original) +
      (tuning.coverageWeight > 0 ? tuning.coverageWeight * coverageBonus(a.counts, covered) : 0);
    const scoreOf = (vid: number, content?: string) => scoreText(analyzeVid(vid, content));

    const pool = new Set<number>();
    if (selective.length > 0 || query.terms.length === 0) {
      for (const v of collect(matchExpression(query, selective), 'rank')) pool.add(v);
    } else {
      // Every word is in a large share of the rows: bm25 over their whole doclists would cost tens of
      // milliseconds, so the newest matches are ranked instead (the documented trade-off).
      for (const v of collect(matchExpression(query, common), 'newest')) pool.add(v);
    }
    // Expansions find their own candidates, so that many rows matching a rare synonym cannot
    // crowd out the rows matching the user's own words (FTS5's bm25 weighs every term alike).
    if (expansions.length > 0) {
      for (const v of collect(
        matchExpression(
          query,
          expansions.map((e) => e.token),
        ),
        'rank',
      ))
        pool.add(v);
    }
    const scores = new Map([...pool].map((v) => [v, scoreOf(v)]));
    if (selective.length > 0 && common.length > 0) {
      // MaxScore: rows matching only common terms can beat a candidate only when it scores below
      // what the common terms alone could give; when too few clear that bar, read the newest of them.
      const bound = bm25UpperBound(original.filter((w) => common.some((c) => c.stem === w.stem)));
      const clear = [...scores.values()].filter((s) => s >= bound).length;
      if (clear < candidateK) {
        for (const v of collect(matchExpression(query, common), 'newest'))
          if (!scores.has(v)) scores.set(v, scoreOf(v));
      }
    }

    if (
      tuning.feedbackDocs > 0 &&
      tuning.feedbackTerms > 0 &&
      tuning.feedbackWeight > 0 &&
      query.required.length === 0
    ) {
      // Pseudo-relevance feedback (docs/adr/0225): the best candidates' words join the query at a
      // lower weight, find candidates of their own, and every candidate is scored again.
      const top = [...scores.entries()].sort((a, b) => b[1] - a[1] || b[0] - a[0]).slice(0, tuning.feedbackDocs);
      const lent = feedbackTerms(
        top.map(([vid, score]) => ({ words: tokenize(ctx.content(vid)), stems: analyzeVid(vid).tokens, score })),
        new Set(allTerms.map((t) => t.stem)),
        tuning.feedbackTerms,
      );
      const heaviest = Math.max(1e-9, ...lent.map((l) => l.weight));
      allTerms = [
        ...allTerms,
        ...lent.map((l) => ({
          stem: l.stem,
          idf: stats.idf(l),
          weight: (tuning.feedbackWeight * l.weight) / heaviest,
        })),
      ];
      for (const v of collect(matchExpression(query, lent), 'rank')) if (!scores.has(v)) scores.set(v, 0);
      for (const vid of scores.keys()) scores.set(vid, scoreOf(vid));
    }

    if (ctx.neighbours && tuning.contextWeight > 0 && stats.coherent())
      this.#addContext(scores, scoreOf, ctx, collectAccepted);

    const best = Math.max(1e-9, ...scores.values());
    const items = [...scores.entries()]
      .map(([vid, s]) => ({ key: String(vid), similarity: s / best }))
      .sort((a, b) => b.similarity - a.similarity || Number(b.key) - Number(a.key))
      .slice(0, candidateK);
    return {
      items,
      coverage: coverage(
        original,
        [...scores.keys()].map((v) => analyzeVid(v).counts),
      ),
    };
  }

  /**
   * Neighbouring writes as context (docs/adr/0179): the neighbours of the best `CONTEXT_SEEDS`
   * candidates that pass the filters become candidates, then every candidate's score becomes its
   * own plus a share of its best neighbour's own score. Neighbours are only rows the request may see
   * (docs/adr/0224); one that matches no query word still counts as context.
   */
  #addContext(
    scores: Map<number, number>,
    score: (vid: number, content?: string) => number,
    ctx: LexicalContext,
    accept: (vids: readonly number[]) => number[],
  ): void {
    const neighbours = new Map<number, { vid: number; content: string }[]>();
    const neighboursOf = (vid: number) => {
      let list = neighbours.get(vid);
      if (!list) neighbours.set(vid, (list = ctx.neighbours!(vid, this.#tuning.contextReach)));
      return list;
    };
    const seeds = [...scores.entries()].sort((a, b) => b[1] - a[1] || b[0] - a[0]).slice(0, CONTEXT_SEEDS);
    const joining = new Set(seeds.flatMap(([vid]) => neighboursOf(vid).map((n) => n.vid)));
    for (const v of accept([...joining].filter((v) => !scores.has(v)))) scores.set(v, score(v));
    const own = new Map(scores);
    const ownOf = (n: { vid: number; content: string }) => {
      let value = own.get(n.vid);
      if (value === undefined) own.set(n.vid, (value = score(n.vid, n.content)));
      return value;
    };
    for (const [vid, value] of scores)
      scores.set(vid, withContext(value, neighboursOf(vid).map(ownOf), this.#tuning.contextWeight));
  }

  /**
   * Thesaurus expansions of the query's plain words: weighted by relation, each stem once (its
   * strongest relation), never a stem of the query itself, a function word, a very common word or
   * a word absent from the index.
   */
  #expansions(
    query: LexicalQuery,
    original: readonly WeightedTerm[],
    commonLimit: number,
    stats: ViewStatistics,
  ): { term: WeightedTerm; token: QueryTerm }[] {
    const own = new Set(original.map((t) => t.stem));
    const found = new Map<string, { term: WeightedTerm; token: QueryTerm }>();
    for (const t of query.terms) {
      for (const e of this.#thesaurus!.expand(t.token)) {
        if (isStopword(e.word) || !/^\p{L}+$/u.test(e.word)) continue;
        const s = stem(e.word);
        if (own.has(s)) continue;
        const token = { token: e.word, stem: s };
        const df = stats.documentFrequency(token);
        if (df === 0 || df > commonLimit) continue;
        const weight = expansionWeight(e);
        const existing = found.get(s);
        if (existing && existing.term.weight >= weight) continue;
        found.set(s, { term: { stem: s, idf: stats.idf(token), weight, group: t.stem }, token });
      }
    }
    return [...found.values()];
  }
}

/** The largest IDF-weighted share of `terms` that one of `docs` (stem counts) holds. */
function coverage(terms: readonly WeightedTerm[], docs: readonly ReadonlyMap<string, number>[]): number {
  const total = terms.reduce((sum, t) => sum + t.idf, 0);
  if (total <= 0) return 0;
  let best = 0;
  for (const counts of docs) {
    const held = terms.reduce((sum, t) => sum + (counts.has(t.stem) ? t.idf : 0), 0) / total;
    if (held > best) best = held;
  }
  return best;
}

/** The query's ranking terms with their IDF: optional terms and the words of its literals. */
function weightedTerms(query: LexicalQuery, idfOf: (term: QueryTerm) => number): WeightedTerm[] {
  const terms = new Map<string, QueryTerm>();
  for (const t of query.terms) if (!terms.has(t.stem)) terms.set(t.stem, t);
  for (const token of query.literals.flatMap((l) => tokenize(l))) {
    const s = stem(token);
    if (!terms.has(s)) terms.set(s, { token, stem: s });
  }
  return [...terms.values()].map((t) => ({ stem: t.stem, idf: idfOf(t), weight: 1 }));
}
