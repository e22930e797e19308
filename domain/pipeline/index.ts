/**
 * The deploy pipeline's pure parts: step order, step plans and idempotency decisions.
 */
export {
  MUTABLE_STEPS,
  PIPELINE_ORDER,
  PipelineKind,
  PipelineStep,
  planSteps,
  stepPlanInput,
  stepsFor,
} from './pipeline-step.js';
export type { PlannedStep, StepPlanInput } from './pipeline-step.js';
export {
  IDEMPOTENCY_KEY_PATTERN,
  IDEMPOTENCY_KEY_TTL_MS,
  decideIdempotency,
  requestFingerprint,
} from './idempotency.js';
export type { IdempotencyDecision } from './idempotency.js';
