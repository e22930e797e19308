/**
 * The container runtime of the local driver (ADR 0219): tasks that name an image run as OCI
 * containers through podman, supervised like host processes. The task's leader is the attached
 * `podman run` client: it proxies the drain signal to the container, ends with the container's exit
 * code, and outlives a restart of the control plane (it runs in its own session), so adoption,
 * restarts, drains and exit recording are the host driver's own. The container's output goes
 * straight to the allocation's log files (`--log-driver passthrough`).
 */
import path from 'node:path';
import type { Podman } from '../../containers/podman.js';
import type { TaskLimits } from '../tasks/task-sandbox.js';

/** How app containers reach the network. */
export const ContainerNetwork = {
  /**
   * The host's network namespace: the app listens on its assigned loopback or host port and reaches
   * the platform's services on 127.0.0.1 as a host process does.
   */
  host: 'host',
  /** A private network namespace; each port is published on 127.0.0.1 only. */
  bridge: 'bridge',
} as const;
export type ContainerNetwork = (typeof ContainerNetwork)[keyof typeof ContainerNetwork];

/** What the local driver needs to run image tasks. */
export interface ContainerRuntime {
  readonly podman: Podman;
  readonly network: ContainerNetwork;
  /** Creates containers ahead of their start (ADR 0228). @default true */
  readonly prepareAhead?: boolean;
  /** `--ulimit nofile` and `nproc` of every container, at or below the host's hard limits. */
  readonly limits: TaskLimits;
  /**
   * Root of the per-allocation parent cgroups (`--cgroup-parent`, cgroupfs manager only), which
   * outlive a container so that an OOM kill is still readable after its exit; undefined: none.
   */
  readonly cgroupParentRoot?: string;
  /** The cgroup mount. @default /sys/fs/cgroup */
  readonly cgroupMount?: string;
}

/** The name of an allocation's container. */
export function containerName(allocationId: string): string {
  return `svc-${allocationId}`;
}

/** Label that names the app of a platform container (retirement removes them by it). */
export const APP_LABEL = 'io.svc.app';

/** Label of a container created ahead of its start (ADR 0228); one never started is removed by the next driver. */
export const PREPARED_LABEL = 'io.svc.prepared';
/** Label of a prepared container: the allocations folder of the driver that prepared it. */
export const PREPARED_BY_LABEL = 'io.svc.prepared-by';

/** The file podman writes the allocation's container id to (`--cidfile`), removed before each start. */
export function containerIdFile(allocationDir: string): string {
  return path.join(allocationDir, 'logs', 'container.cid');
}
