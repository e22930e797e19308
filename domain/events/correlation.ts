/**
 * Correlation keys: the stable key (metadata.correlationKey) that groups an event with the other
 * events of the same incident, one family per kind of subject.
 */

/** Correlation key builders, one per family of the spec. */
export const CorrelationKey = {
  /** Service health of one process: `{app}:{process}:health`. */
  health: (app: string, process: string) => `${app}:${process}:health`,
  /** Allocation state of a task group: `{app}:{taskGroup}:allocation`. */
  allocation: (app: string, taskGroup: string) => `${app}:${taskGroup}:allocation`,
  /** Task restarts and OOM kills: `{app}:{taskGroup}:{task}:restarts`. */
  restarts: (app: string, taskGroup: string, task: string) => `${app}:${taskGroup}:${task}:restarts`,
  /** Deploy lifecycle and canary promotion: `{app}:deploy`. */
  deploy: (app: string) => `${app}:deploy`,
  /** Rollback lifecycle: `{app}:rollback`. */
  rollback: (app: string) => `${app}:rollback`,
  /** Snapshot operations: `{app}:snapshots`. */
  snapshots: (app: string) => `${app}:snapshots`,
  /** Cron outcomes of a periodic process: `{app}:{process}:cron`. */
  cron: (app: string, process: string) => `${app}:${process}:cron`,
  /** Host capacity, scoped by host id: `svc-host:<host-id>:minimum-capacity`. */
  capacity: (hostId: string) => `svc-host:${hostId}:minimum-capacity`,
} as const;

/** The legacy, host-less capacity key; recoveries must name one exact legacy warning to close it. */
export const LEGACY_CAPACITY_KEY = 'svc-host:minimum-capacity';

/** True for host capacity keys, scoped or legacy. */
export function isCapacityKey(key: string): boolean {
  return key === LEGACY_CAPACITY_KEY || /^svc-host:[^:]+:minimum-capacity$/.test(key);
}

/** The explicit correlation key in an event's metadata, when it is a non-empty string. */
export function explicitCorrelationKey(metadata: Readonly<Record<string, unknown>> | undefined): string | undefined {
  const key = metadata?.correlationKey;
  return typeof key === 'string' && key !== '' ? key : undefined;
}

/** The key an event groups under: metadata.correlationKey, else its dedupeKey, else its own id. */
export function groupKeyOf(
  metadata: Readonly<Record<string, unknown>> | undefined,
  dedupeKey: string | undefined | null,
  id: string,
): string {
  return explicitCorrelationKey(metadata) ?? dedupeKey ?? id;
}
