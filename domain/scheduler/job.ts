/**
 * Scheduler job: what the control plane asks a substrate to run for one app, with one task group
 * per process. Jobs are the translated, canonical form of an app spec; drivers never read
 * infraspec.yaml themselves.
 */
import type { Duration } from './duration.js';

/** How a job's allocations live: kept running, run to completion, or launched on a cron schedule. */
export const JobType = {
  /** Long-running processes that are restarted when they exit. */
  service: 'service',
  /** Run-to-completion work; parameterized batch jobs only run when dispatched. */
  batch: 'batch',
  /** A parent that launches a batch child on each cron tick. */
  periodic: 'periodic',
} as const;
export type JobType = (typeof JobType)[keyof typeof JobType];

/** A named port a task needs: dynamic (picked free by the driver) unless `static` is set. */
export interface PortSpec {
  /** Port label, e.g. `http` or `metrics`; exposed as `SVC_PORT_<LABEL>`. */
  readonly label: string;
  /** Fixed host port; absent means the driver picks a free one. */
  readonly static?: number;
}

/** An HTTP health check the substrate runs against an instance and reports to the registry. */
export interface HttpCheckSpec {
  /** Request path, e.g. `/healthz`. */
  readonly path: string;
  readonly interval: Duration;
  readonly timeout: Duration;
}

/** A registry service the task group's instances are registered under. */
export interface ServiceRegistrationSpec {
  /** Registry service name, e.g. `<app>-<process>` or `<app>-<process>-metrics`. */
  readonly name: string;
  /** Label of the port the service answers on. */
  readonly portLabel: string;
  readonly tags?: readonly string[];
  /** Absent for services registered without a check (e.g. metrics companions). */
  readonly check?: HttpCheckSpec;
}

/** Graceful stop: the signal sent first, and how long to wait before killing. */
export interface DrainSpec {
  /** Signal name such as `SIGTERM` or `SIGINT`. */
  readonly signal: NodeJS.Signals;
  readonly timeout: Duration;
}

/** Resource limits: CPU in MHz (advisory for the local driver) and memory in MB (enforced). */
export interface ResourcesSpec {
  readonly cpuMhz: number;
  readonly memoryMb: number;
}

/** A file rendered into the allocation directory before the task starts; a content change restarts the task. */
export interface TemplateFileSpec {
  /** Path relative to the allocation directory, e.g. `secrets/db-password`; no `..`, not absolute. */
  readonly destination: string;
  readonly contents: string;
  /** Octal file mode; @default 0o400 */
  readonly mode?: number;
}

/** A host volume mounted into the task. */
export interface VolumeMountSpec {
  /** Host volume name known to the driver. */
  readonly volume: string;
  /** Mount path in a container; the local driver exposes the host path instead. */
  readonly destination: string;
  readonly readOnly: boolean;
}

/** The one task of a task group: what to execute and with which environment. */
export interface TaskSpec {
  readonly name: string;
  /** Shell string (run with `/bin/sh -c`) or argv. Absent means the release's default command. */
  readonly command?: string | readonly string[];
  /** Absolute host directory the task runs in (the release's working directory) for host drivers. */
  readonly workdir?: string;
  /** Container image reference for container drivers; the local driver refuses it. */
  readonly image?: string;
  readonly env: Readonly<Record<string, string>>;
  readonly resources: ResourcesSpec;
  readonly files?: readonly TemplateFileSpec[];
  readonly volumes?: readonly VolumeMountSpec[];
  /**
   * The user the task asks to run as, in Docker `USER` syntax (`name`, `uid`, `name:group`,
   * `uid:gid`): the process's `schedulerVariables` uid/gid, else the Dockerfile's `USER`. Drivers
   * never run a task as root; absent, a driver running as root uses the app's own user (ADR 0047).
   */
  readonly user?: string;
  /** Maximum run time of one batch execution; exceeded runs end as `timed_out`. */
  readonly timeout?: Duration;
}

/** Restart behaviour after a task exits unexpectedly. */
export interface RestartPolicySpec {
  /** First delay; doubled after each consecutive failure. */
  readonly initialDelay: Duration;
  readonly maxDelay: Duration;
  /** Run time after which the failure streak resets. */
  readonly resetAfter: Duration;
  /**
   * Restarts allowed within `interval`; one more exit fails the allocation (status `failed`).
   * @default unlimited
   */
  readonly attempts?: number;
  /** Window for `attempts`. @default 30 minutes */
  readonly interval?: Duration;
}

/** One task group: the allocations of one process. */
export interface TaskGroupSpec {
  /** Process name. */
  readonly name: string;
  /** Desired allocations; 0 scales the process to zero. Ignored for periodic and parameterized jobs. */
  readonly count: number;
  readonly task: TaskSpec;
  readonly ports: readonly PortSpec[];
  readonly services: readonly ServiceRegistrationSpec[];
  readonly drain: DrainSpec;
  readonly restart?: RestartPolicySpec;
  /** Canary allocations started beside the old version when the group changes; 0 means a direct roll. */
  readonly canary?: number;
}

/** Periodic settings: the cron expression (5 or 6 fields) and overlap rule. */
export interface PeriodicSpec {
  readonly cron: string;
  /** IANA zone; @default UTC */
  readonly timeZone?: string;
  /** Skip a tick while the previous child is still running. @default true */
  readonly prohibitOverlap?: boolean;
}

/** Marks a batch job as dispatch-only: each dispatch runs one allocation with its payload. */
export interface ParameterizedSpec {
  /** Whether a payload must, may or must not be given. @default optional */
  readonly payload: 'required' | 'optional' | 'forbidden';
}

/** A job: the unit of submission, identified by `id`, versioned by the driver. */
export interface JobSpec {
  readonly id: string;
  /** Owning app name. */
  readonly app: string;
  readonly type: JobType;
  /** Scheduler region this job targets; the local driver treats each region as its own local target. */
  readonly region?: string;
  /** @default ['dc1'] */
  readonly datacenters?: readonly string[];
  /** Logical node pool shared by all task groups of the job. */
  readonly nodePool?: string;
  readonly taskGroups: readonly TaskGroupSpec[];
  readonly periodic?: PeriodicSpec;
  readonly parameterized?: ParameterizedSpec;
  /** Free-form metadata (deployment id, commit) recorded with the job. */
  readonly meta?: Readonly<Record<string, string>>;
}
