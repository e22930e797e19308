/**
 * Ranking math: raw components, weighted contributions and the final score. Pure functions.
 */
import { RECENCY_ALPHA, type MemType, type ScoreWeights } from '../modes.js';

/** Raw components of one candidate, each in [0, 1]. */
export interface ScoreComponents {
  readonly similarity: number;
  readonly confidence: number;
  readonly recency: number;
  readonly utility: number;
}

/** A scored candidate: the raw components, their weighted contributions and their sum. */
export interface Score {
  readonly score: number;
  readonly components: ScoreComponents;
  /** Weighted contributions; they sum to `score` exactly as computed here. */
  readonly breakdown: ScoreComponents;
}

const HOUR_MS = 3_600_000;

/** Clamps a number into [0, 1]; NaN becomes 0. */
export function clamp01(value: number): number {
  if (!(value > 0)) return 0;
  return value > 1 ? 1 : value;
}

/**
 * Recency component exp(-α · age in hours); ages below zero count as zero. α is the memory type's
 * rate unless `alphaOverride` (a per-request `score_params.decay_alpha`) is a positive number.
 */
export function recencyScore(ageMs: number, memType: MemType | null | undefined, alphaOverride?: number): number {
  const alpha = alphaOverride !== undefined && alphaOverride > 0 ? alphaOverride : RECENCY_ALPHA[memType ?? 'untyped'];
  const hours = Math.max(0, ageMs) / HOUR_MS;
  return Math.exp(-alpha * hours);
}

/**
 * Noisy-OR of source credibilities: the chance that at least one supporting source is right.
 * No supporters gives 0.
 */
export function corroboration(credibilities: readonly number[]): number {
  let miss = 1;
  for (const c of credibilities) miss *= 1 - clamp01(c);
  return credibilities.length === 0 ? 0 : 1 - miss;
}

/** Confidence component: the node's confidence scaled by the corroboration of its remaining sources. */
export function confidenceScore(confidence: number, credibilities: readonly number[]): number {
  return clamp01(confidence) * corroboration(credibilities);
}

/**
 * Scores one candidate. The score is the sum of the four contributions in a fixed order, so
 * `breakdown.similarity + breakdown.confidence + breakdown.recency + breakdown.utility === score`.
 */
export function scoreCandidate(components: ScoreComponents, weights: ScoreWeights): Score {
  const c: ScoreComponents = {
    similarity: clamp01(components.similarity),
    confidence: clamp01(components.confidence),
    recency: clamp01(components.recency),
    utility: clamp01(components.utility),
  };
  const breakdown: ScoreComponents = {
    similarity: weights.similarity * c.similarity,
    confidence: weights.confidence * c.confidence,
    recency: weights.recency * c.recency,
    utility: weights.utility * c.utility,
  };
  const score = breakdown.similarity + breakdown.confidence + breakdown.recency + breakdown.utility;
  return { score, components: c, breakdown };
}

/** Weights from a mode default overridden field by field by caller-supplied values. */
export function mergeWeights(base: ScoreWeights, override: Partial<ScoreWeights> | undefined): ScoreWeights {
  return {
    similarity: override?.similarity ?? base.similarity,
    confidence: override?.confidence ?? base.confidence,
    recency: override?.recency ?? base.recency,
    utility: override?.utility ?? base.utility,
  };
}
