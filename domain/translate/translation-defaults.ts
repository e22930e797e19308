/**
 * Defaults the translation applies where the spec leaves a scheduler setting open.
 */
import { LOCAL_REGION, seconds, type Duration } from '../scheduler/index.js';

/** Defaults of the spec-to-job translation (see docs/adr/0060-spec-to-job-translation.md). */
export const TranslationDefaults: {
  /** Wait between the drain signal and the kill when `drain.timeout` is not set (the usual kill timeout). */
  readonly drainTimeout: Duration;
  /** Run time limit of a function process that sets no `function.timeout` (the legacy form's 30 seconds). */
  readonly functionTimeout: Duration;
  /** Name of the single target of a spec without `regions`. */
  readonly localRegion: string;
  /** Datacenters of the local target. */
  readonly localDatacenters: readonly string[];
  /** Port label of a process's `port`. */
  readonly httpPortLabel: string;
  /** Port label of a separate `metrics.port`. */
  readonly metricsPortLabel: string;
} = {
  drainTimeout: seconds(5),
  functionTimeout: seconds(30),
  localRegion: LOCAL_REGION,
  localDatacenters: ['dc1'],
  httpPortLabel: 'http',
  metricsPortLabel: 'metrics',
};

/** Keys of the job meta the translation writes. */
export const JobMetaKey = {
  app: 'svc.app',
  process: 'svc.process',
  commit: 'svc.commit',
  region: 'svc.region',
  schedulerVariablesPath: 'svc.schedulerVariablesPath',
  missingSchedulerVariables: 'svc.missingSchedulerVariables',
} as const;
export type JobMetaKey = (typeof JobMetaKey)[keyof typeof JobMetaKey];
