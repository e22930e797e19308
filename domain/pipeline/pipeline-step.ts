/**
 * Deploy pipeline steps in the spec's order, which of them change the runtime (mutable), and the
 * plan of steps a deploy, preflight or rollback runs for an app.
 */
import type { CanonicalAppSpec } from '../spec/index.js';

/** A pipeline step, in execution order. */
export const PipelineStep = {
  validate: 'validate',
  clone: 'clone',
  inspect: 'inspect',
  build: 'build',
  test: 'test',
  snapshot: 'snapshot',
  migrate: 'migrate',
  submit: 'submit',
  healthy: 'healthy',
  forge: 'forge',
  cleanup: 'cleanup',
} as const;
export type PipelineStep = (typeof PipelineStep)[keyof typeof PipelineStep];

/** The spec's order. */
export const PIPELINE_ORDER: readonly PipelineStep[] = Object.values(PipelineStep);

/** Steps that change data or the runtime: an attempt interrupted after entering one is never requeued. */
export const MUTABLE_STEPS: ReadonlySet<PipelineStep> = new Set<PipelineStep>([
  'snapshot',
  'migrate',
  'submit',
  'healthy',
  'forge',
]);

/** Which pipeline runs. */
export const PipelineKind = { deploy: 'deploy', preflight: 'preflight', rollback: 'rollback' } as const;
export type PipelineKind = (typeof PipelineKind)[keyof typeof PipelineKind];

const STEPS_BY_KIND: Record<PipelineKind, readonly PipelineStep[]> = {
  // validate and inspect are preflight only.
  deploy: ['clone', 'build', 'test', 'snapshot', 'migrate', 'submit', 'healthy', 'forge', 'cleanup'],
  preflight: ['validate', 'clone', 'inspect', 'build', 'test', 'cleanup'],
  // A rollback re-deploys a built release: no clone, build or test.
  rollback: ['submit', 'healthy', 'forge'],
};

/** The steps `kind` runs, in order. */
export function stepsFor(kind: PipelineKind): readonly PipelineStep[] {
  return STEPS_BY_KIND[kind];
}

/** What the planner needs to know about an app. */
export interface StepPlanInput {
  readonly hasPostgres: boolean;
  readonly hasMigrations: boolean;
  readonly hasTestCommand: boolean;
  readonly endpointCount: number;
  /** Capabilities other parts of the platform provide once they exist. */
  readonly capabilities: { readonly snapshots: boolean; readonly migrations: boolean; readonly routing: boolean };
}

/** What the planner needs to know about an app, read from its canonical spec. */
export function stepPlanInput(spec: CanonicalAppSpec, capabilities: StepPlanInput['capabilities']): StepPlanInput {
  return {
    hasPostgres: spec.infrastructure?.postgres !== undefined,
    hasMigrations: typeof spec.migrations === 'string',
    hasTestCommand: typeof spec.build.test === 'string' && spec.build.test.length > 0,
    endpointCount: spec.endpoints.length,
    capabilities,
  };
}

/** One planned step: run it, or record it as skipped with the reason. */
export type PlannedStep =
  | { readonly step: PipelineStep; readonly run: true }
  | { readonly step: PipelineStep; readonly run: false; readonly reason: string };

/** Plans the steps of one pipeline run for an app; skipped steps carry why. */
export function planSteps(kind: PipelineKind, input: StepPlanInput): PlannedStep[] {
  return stepsFor(kind).map((step): PlannedStep => {
    switch (step) {
      case 'test':
        return input.hasTestCommand ? { step, run: true } : { step, run: false, reason: 'build.test is not set' };
      case 'snapshot':
        if (!input.hasPostgres) return { step, run: false, reason: 'the app declares no postgres infrastructure' };
        return input.capabilities.snapshots
          ? { step, run: true }
          : { step, run: false, reason: 'the snapshots capability is not available in this build' };
      case 'migrate':
        if (!input.hasMigrations) return { step, run: false, reason: 'the app declares no migrations' };
        return input.capabilities.migrations
          ? { step, run: true }
          : { step, run: false, reason: 'the migrations capability is not available in this build' };
      case 'forge':
        if (input.endpointCount === 0) return { step, run: false, reason: 'the app declares no endpoints' };
        return input.capabilities.routing
          ? { step, run: true }
          : { step, run: false, reason: 'no routing controller is available to update the tunnel ingress' };
      default:
        return { step, run: true };
    }
  });
}
