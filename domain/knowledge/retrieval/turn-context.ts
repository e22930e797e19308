/**
 * Neighbouring writes as context for lexical ranking (docs/adr/0179-neighbouring-turns-as-context.md).
 *
 * In a recorded conversation the answer often sits in the turn after the question's words ("What did
 * you paint?" / "A sunrise, last year."), so a turn also earns part of the best lexical score among the
 * writes just before and after it in its namespace. That helps only where write order carries topic:
 * a store of unrelated facts written one after the other would only gain noise. So the context is
 * used only in namespaces whose adjacent writes share more words than distant ones (`isCoherent`).
 * Pure functions.
 */
import { analyze, isStopStem } from './text-analysis.js';

/** How many writes on each side of a turn are its context. */
export const CONTEXT_REACH = 2;
/** Share of the best neighbour's lexical score a turn earns. */
export const CONTEXT_WEIGHT = 0.5;
/** Neighbours of this many best own-scored candidates join the candidates. */
export const CONTEXT_SEEDS = 20;
/** Adjacent writes must overlap at least this many times more than distant ones. */
export const COHERENCE_MARGIN = 1.1;
/** Fewer sampled writes than this say nothing about the order. */
export const COHERENCE_MIN_SAMPLE = 20;

/** A turn's score with context: its own plus `weight` times the best of its neighbours'. */
export function withContext(own: number, neighbours: readonly number[], weight = CONTEXT_WEIGHT): number {
  let best = 0;
  for (const n of neighbours) if (n > best) best = n;
  return own + weight * best;
}

/** Overlap of two sets of stems: shared stems over the smaller set (0 when either is empty). */
function overlap(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let shared = 0;
  for (const x of a) if (b.has(x)) shared++;
  return shared / Math.min(a.size, b.size);
}

/**
 * Whether write order carries topic in a sample of contents given in write order: adjacent contents
 * share content words (function words aside) at least `COHERENCE_MARGIN` times as much as contents
 * half the sample apart. False for samples below `COHERENCE_MIN_SAMPLE`.
 */
export function isCoherent(contents: readonly string[]): boolean {
  if (contents.length < COHERENCE_MIN_SAMPLE) return false;
  const stems = contents.map((c) => new Set(analyze(c).filter((s) => !isStopStem(s))));
  const mean = (offset: number) => {
    let sum = 0;
    for (let i = 0; i + offset < stems.length; i++) sum += overlap(stems[i]!, stems[i + offset]!);
    return sum / (stems.length - offset);
  };
  const adjacent = mean(1);
  const distant = mean(Math.floor(stems.length / 2));
  return adjacent > 0 && adjacent >= COHERENCE_MARGIN * distant;
}
