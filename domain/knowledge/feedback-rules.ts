/**
 * Feedback update rules: how validate, refute, useful and stale change a claim's confidence and
 * utility and its asserting source's credibility. Every rule is bounded (results stay in [0, 1]),
 * monotone (validate never lowers, refute and stale never raise) and explainable (one named step
 * per action). Numbers and reasoning: docs/adr/0030-feedback-update-rules.md.
 */

/** The four feedback actions. */
export const FeedbackAction = {
  validate: 'validate',
  refute: 'refute',
  useful: 'useful',
  stale: 'stale',
} as const;
export type FeedbackAction = (typeof FeedbackAction)[keyof typeof FeedbackAction];
export const FEEDBACK_ACTIONS: readonly FeedbackAction[] = Object.values(FeedbackAction);

/** Step sizes of the update rules. */
export const FEEDBACK_STEPS = {
  /** validate: confidence moves this fraction of the way to 1. */
  validateConfidence: 0.2,
  /** validate: source credibility moves this fraction of the way to 1. */
  validateCredibility: 0.05,
  /** refute: confidence is capped at this value (and never raised). */
  refuteConfidenceCeiling: 0.1,
  /** refute: source credibility keeps this fraction of itself. */
  refuteCredibilityFactor: 0.9,
  /** useful: utility moves this fraction of the way to 1. */
  usefulUtility: 0.1,
  /** stale: confidence keeps this fraction of itself. */
  staleConfidenceFactor: 0.7,
  /** stale: utility keeps this fraction of itself. */
  staleUtilityFactor: 0.5,
} as const;

/** The state feedback changes. */
export interface FeedbackState {
  readonly confidence: number;
  readonly utility: number;
  readonly credibility: number;
}

/** The state after one action, with a sentence per changed value. */
export interface FeedbackOutcome extends FeedbackState {
  readonly explanation: string;
}

function clamp(x: number): number {
  return x < 0 ? 0 : x > 1 ? 1 : x;
}

function round(x: number): number {
  return Math.round(x * 1e12) / 1e12;
}

/** Highest recall grade of `useful` (the SM-2 quality scale 0-5 the origin's clients send). */
export const MAX_RECALL_QUALITY = 5;

/**
 * Applies one feedback action to a claim's state. `quality` (0-5, `useful` only) scales the
 * utility step: grade q moves utility q/5 of the usual 10%; without it the full step applies.
 */
export function applyFeedback(action: FeedbackAction, state: FeedbackState, quality?: number): FeedbackOutcome {
  const s = FEEDBACK_STEPS;
  const c = clamp(state.confidence);
  const u = clamp(state.utility);
  const r = clamp(state.credibility);
  switch (action) {
    case 'validate': {
      const confidence = round(c + s.validateConfidence * (1 - c));
      const credibility = round(r + s.validateCredibility * (1 - r));
      return {
        confidence,
        utility: u,
        credibility,
        explanation: `validate: confidence ${c} -> ${confidence} (20% of the way to 1); source credibility ${r} -> ${credibility} (5% of the way to 1)`,
      };
    }
    case 'refute': {
      const confidence = round(Math.min(c, s.refuteConfidenceCeiling));
      const credibility = round(r * s.refuteCredibilityFactor);
      return {
        confidence,
        utility: u,
        credibility,
        explanation: `refute: confidence ${c} -> ${confidence} (capped at ${s.refuteConfidenceCeiling}); source credibility ${r} -> ${credibility} (x${s.refuteCredibilityFactor})`,
      };
    }
    case 'useful': {
      const grade = quality === undefined ? MAX_RECALL_QUALITY : Math.min(MAX_RECALL_QUALITY, Math.max(0, quality));
      const step = s.usefulUtility * (grade / MAX_RECALL_QUALITY);
      const utility = round(u + step * (1 - u));
      const how =
        quality === undefined
          ? '10% of the way to 1'
          : `${round(step * 100)}% of the way to 1, recall quality ${grade}/${MAX_RECALL_QUALITY}`;
      return {
        confidence: c,
        utility,
        credibility: r,
        explanation: `useful: utility ${u} -> ${utility} (${how}); recall count +1`,
      };
    }
    case 'stale': {
      const confidence = round(c * s.staleConfidenceFactor);
      const utility = round(u * s.staleUtilityFactor);
      return {
        confidence,
        utility,
        credibility: r,
        explanation: `stale: confidence ${c} -> ${confidence} (x${s.staleConfidenceFactor}); utility ${u} -> ${utility} (x${s.staleUtilityFactor})`,
      };
    }
  }
}

/** True when the action changes the asserting source's credibility. */
export function changesCredibility(action: FeedbackAction): boolean {
  return action === 'validate' || action === 'refute';
}
