/**
 * The options of the local driver: where its state lives, where it publishes, how it supervises,
 * isolates and captures its tasks.
 */
import type { Logger } from 'pino';
import type { RegistryWriter } from '../../domain/registry/index.js';
import type { Duration, RestartPolicySpec } from '../../domain/scheduler/index.js';
import type { LogSink } from '../../domain/logs/index.js';
import type { HostVolume } from './tasks/task-environment.js';
import type { AppIdentities } from './isolation/app-identity.js';
import type { PrivateMounts, TaskLimits } from './tasks/task-sandbox.js';
import type { ContainerRuntime } from './containers/container-runtime.js';

/** Options of the local driver. */
export interface LocalSchedulerOptions {
  /** Root of driver state: `<dataDir>/scheduler/state.json` and `<dataDir>/allocs/<id>/`. */
  readonly dataDir: string;
  /** Where instances and check results are published. */
  readonly registry: RegistryWriter;
  /** @default silent */
  readonly logger?: Logger;
  /** How often liveness of re-adopted processes and RSS are sampled. @default 250ms */
  readonly monitorInterval?: Duration;
  /** Restart policy of groups that set none. @default 1s initial, 30s max, reset after 10s */
  readonly defaultRestart?: RestartPolicySpec;
  /** Host directories offered as named volumes. @default none */
  readonly hostVolumes?: Readonly<Record<string, HostVolume>>;
  /** Region name of this local target. @default local */
  readonly region?: string;
  /** @default dc1 */
  readonly datacenter?: string;
  /** Bytes of stdout/stderr kept in an execution record. @default 1 MiB */
  readonly outputLimitBytes?: number;
  /** Executions kept per job. @default 100 */
  readonly executionHistory?: number;
  /** cgroup mount under which CPU weights are applied (`resources.cpu`); null turns them off. @default /sys/fs/cgroup */
  readonly cgroupRoot?: string | null;
  /** Who tasks run as. @default each app's own system user when root, else the platform's user ({@link detectAppIdentities}) */
  readonly identities?: AppIdentities;
  /** `RLIMIT_NOFILE` and `RLIMIT_NPROC` of every task. @default {@link DEFAULT_TASK_LIMITS} */
  readonly limits?: TaskLimits;
  /** Private mount namespaces (own `/tmp`, bind-mounted volumes). @default probed ({@link detectPrivateMounts}) */
  readonly privateMounts?: PrivateMounts;
  /** Where every allocation's stdout and stderr lines go (docs/adr/0165). @default not captured */
  readonly logs?: LogSink;
  /**
   * Start-up window of a new allocation's health checks: probed at once, then after 100 ms,
   * doubling up to the interval, until the first pass; failures inside it raise no health event.
   * @default 60s
   */
  readonly healthStartupWindow?: Duration;
  /**
   * How long an allocation replaced by a passing one stays up after leaving the registry, before
   * its drain signal: requests the gateway already chose it for arrive and finish. @default 500ms
   */
  readonly withdrawDelay?: Duration;
  /** Folder of app releases; each app's subfolder is made readable by that app's group only. @default `<dataDir>/releases` */
  readonly releasesDir?: string;
  /** `<dataDir>/secrets`: each app's decrypted secret files, copied into its tasks' `secrets/` folder. */
  readonly appSecretsDir?: string;
  /**
   * Tasks are forked and exec'd by a small helper process rather than by this one (ADR 0199): a
   * fork of a large process blocks the event loop for time proportional to its memory mappings.
   * Without Perl, or with false, tasks are spawned from this process. @default true
   */
  readonly spawnHelper?: boolean;
  /**
   * Runs tasks that name an image as podman containers (ADR 0219); undefined: image tasks are
   * refused and only host processes run.
   */
  readonly containers?: ContainerRuntime;
}
