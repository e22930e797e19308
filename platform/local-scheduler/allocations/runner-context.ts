/**
 * What an allocation runner needs from its driver: the host's isolation and limits, the restart
 * default, the spawner helper, and where it reports changes and its end.
 */
import type { Logger } from 'pino';
import type { AllocationStatus, RestartPolicySpec, TaskEvent } from '../../../domain/scheduler/index.js';
import type { CpuWeights } from '../tasks/cpu-weight.js';
import type { AllocationRecord } from '../driver-state.js';
import type { TaskSpawner } from '../tasks/task-spawner.js';
import type { AllocationServicesContext } from './allocation-services.js';
import type { AppIdentities } from '../isolation/app-identity.js';
import type { AllocationFolders, HostVolume } from '../tasks/task-environment.js';
import type { TaskLimits } from '../tasks/task-sandbox.js';
import type { ContainerRuntime } from '../containers/container-runtime.js';

/** How a run-to-completion allocation ended. */
export type RunOutcome = 'succeeded' | 'failed' | 'timed_out' | 'stopped';

/** What a runner needs from its driver. */
export interface RunnerContext extends AllocationServicesContext {
  readonly logger: Logger;
  /** Applies `resources.cpu` as a CPU weight to each spawned process tree. */
  readonly cpuWeights: CpuWeights;
  readonly hostVolumes: Readonly<Record<string, HostVolume>>;
  /** Who tasks run as: each app's own user (root), or the platform's user. */
  readonly identities: AppIdentities;
  /** App data and release folders, and whether tasks get a private mount namespace. */
  readonly folders: AllocationFolders;
  /** `RLIMIT_NOFILE` and `RLIMIT_NPROC` of every task. */
  readonly limits: TaskLimits;
  readonly defaultRestart: RestartPolicySpec;
  /** Runs tasks that name an image (ADR 0219); undefined: host processes only. */
  readonly containers?: ContainerRuntime;
  /** Containers created ahead of their start (ADR 0228). */
  readonly prepared?: { claim(allocationId: string, digest: string): boolean };
  /** The helper that forks and execs tasks (ADR 0199); undefined: spawn from this process. */
  spawner?(): TaskSpawner | undefined;
  /** Persists the record and notifies watchers. */
  changed(record: AllocationRecord, previousStatus: AllocationStatus, event?: TaskEvent): void;
  /** The allocation reached a terminal status; the runner is done. */
  finished(record: AllocationRecord, outcome: RunOutcome): void;
}
