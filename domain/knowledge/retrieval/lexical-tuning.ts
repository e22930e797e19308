/**
 * The lexical ranker's parameters in one place, so that an evaluation can choose them on some
 * conversations and score others with them (bench/retrieval-quality.ts, docs/adr/0225). The store
 * runs with `DEFAULT_LEXICAL_TUNING`. Pure data.
 */
import { BM25_B, BM25_K1, COVERAGE_WEIGHT } from './lexical-scoring.js';
import { CONTEXT_REACH, CONTEXT_WEIGHT } from './turn-context.js';

/** Parameters of one lexical ranking. */
export interface LexicalTuning {
  /** BM25 term-frequency saturation. */
  readonly k1: number;
  /** BM25 length normalization. */
  readonly b: number;
  /** Share of the best neighbour's score a turn earns (docs/adr/0179); 0: no context. */
  readonly contextWeight: number;
  /** Weight of the coverage bonus (`coverageBonus`); 0: none. */
  readonly coverageWeight: number;
  /** Writes on each side of a turn that are its context. */
  readonly contextReach: number;
  /** Pseudo-relevance feedback: how many of the best candidates lend their words; 0: none. */
  readonly feedbackDocs: number;
  /** ... how many of their words join the query. */
  readonly feedbackTerms: number;
  /** ... at what weight, relative to the query's own words. */
  readonly feedbackWeight: number;
}

export const DEFAULT_LEXICAL_TUNING: LexicalTuning = {
  k1: BM25_K1,
  b: BM25_B,
  contextWeight: CONTEXT_WEIGHT,
  coverageWeight: COVERAGE_WEIGHT,
  contextReach: CONTEXT_REACH,
  feedbackDocs: 0,
  feedbackTerms: 0,
  feedbackWeight: 0,
};
