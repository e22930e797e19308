/**
 * The state one pipeline run carries from step to step.
 */
import type { CanonicalAppSpec } from '../../domain/spec/index.js';
import type { JobSpec } from '../../domain/scheduler/index.js';
import type { PipelineKind, PipelineStep } from '../../domain/pipeline/index.js';
import type { Deployment } from '../../store/control/deployments.js';
import type { AppRelease } from '../../domain/apps/index.js';
import type { AppSource } from './source-steps.js';

/** What the steps of one run share. */
export interface RunState {
  readonly kind: PipelineKind;
  readonly app: string;
  readonly spec: CanonicalAppSpec;
  readonly source: AppSource;
  readonly workDir: string;
  deployment: Deployment;
  commit?: string;
  release?: AppRelease;
  desired?: JobSpec[];
  /** Set when a step failed. */
  failedStep?: PipelineStep;
}
