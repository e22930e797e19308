/**
 * Reconciliation evidence rules: the narrow, deterministic evidence each kind of open event needs
 * before `POST /api/events/reconcile` may acknowledge it. Anything else stays for operator review.
 */

/** What reconcile proposes for one event. */
export const ReconcileAction = { acknowledge: 'acknowledge', needsReview: 'needs_review' } as const;
export type ReconcileAction = (typeof ReconcileAction)[keyof typeof ReconcileAction];

/** The decision for one event: action, a reason sentence and the evidence that supports it. */
export interface ReconcileDecision {
  readonly action: ReconcileAction;
  readonly reason: string;
  readonly evidence: readonly string[];
}

/** Minimum age of a restart event before a healthy app may close it. */
export const RESTART_RECONCILE_AGE_MS = 15 * 60 * 1000;

/**
 * Observed facts about one open event, gathered by the controller from the event store, the
 * scheduler and the registry. `undefined` means the fact could not be observed (missing
 * substrate, unknown subject): never evidence of recovery.
 */
export interface EvidenceFacts {
  readonly type: string;
  readonly ageMs: number;
  /** deploy.failed: ids of later deploy.succeeded events for the app. */
  readonly laterDeploySucceeded?: readonly string[];
  /** deploy.failed / task restarts: jobs of the app currently running with a healthy allocation. */
  readonly runningHealthyJobs?: readonly string[];
  /** service.health.*: ids of later service.health.recovered events with the same key. */
  readonly laterHealthRecovered?: readonly string[];
  /** service.health.*: every current check of the service (empty when the service has no instances). */
  readonly serviceChecks?: readonly { readonly instanceId: string; readonly status: string }[];
  /** cron.*: the periodic parent job. */
  readonly periodicParent?: {
    readonly jobId: string;
    readonly running: boolean;
    readonly paused: boolean;
    readonly activeChildren: number;
  };
  /** cron.*: the referenced child allocation; `null` when absent, undefined when the event names none. */
  readonly referencedChild?: { readonly allocationId: string; readonly terminal: boolean } | null;
  /** scheduler.task.restarted: whether the app is healthy now (every allocation running, every check passing). */
  readonly appHealthy?: { readonly healthy: boolean; readonly detail: string };
  /** service.capacity.below_minimum: later recoveries from the same source, environment and key. */
  readonly laterCapacityRecovered?: readonly string[];
}

const review = (reason: string, evidence: string[] = []): ReconcileDecision => ({
  action: ReconcileAction.needsReview,
  reason,
  evidence,
});
const ack = (reason: string, evidence: string[]): ReconcileDecision => ({
  action: ReconcileAction.acknowledge,
  reason,
  evidence,
});

const CRON_TYPES = new Set(['cron.failed', 'cron.lost', 'cron.hung', 'cron.missed_run']);

/** Applies the evidence rule of the event's type to the observed facts. */
export function decideReconcile(facts: EvidenceFacts): ReconcileDecision {
  switch (facts.type) {
    case 'deploy.failed': {
      const later = facts.laterDeploySucceeded ?? [];
      const jobs = facts.runningHealthyJobs;
      if (later.length === 0) return review('no later deploy.succeeded for the app');
      if (jobs === undefined)
        return review(
          'scheduler state unavailable',
          later.map((id) => `later deploy.succeeded ${id}`),
        );
      if (jobs.length === 0)
        return review(
          'no running job with a healthy allocation',
          later.map((id) => `later deploy.succeeded ${id}`),
        );
      return ack('a later deploy succeeded and a job is running with a healthy allocation', [
        ...later.map((id) => `later deploy.succeeded ${id}`),
        ...jobs.map((j) => `job ${j} running with a healthy allocation`),
      ]);
    }
    case 'service.health.warning':
    case 'service.health.critical': {
      const later = facts.laterHealthRecovered ?? [];
      if (later.length > 0)
        return ack(
          'a later service.health.recovered carries the same correlation key',
          later.map((id) => `later service.health.recovered ${id}`),
        );
      const checks = facts.serviceChecks;
      if (checks === undefined) return review('registry state unavailable for the service');
      if (checks.length === 0) return review('the service has no current registry checks');
      const failing = checks.filter((c) => c.status !== 'passing');
      if (failing.length > 0)
        return review(
          'some current registry checks are not passing',
          failing.map((c) => `check on ${c.instanceId} is ${c.status}`),
        );
      return ack(
        'every current registry check of the service is passing',
        checks.map((c) => `check on ${c.instanceId} is passing`),
      );
    }
    case 'scheduler.task.restarted': {
      if (facts.ageMs < RESTART_RECONCILE_AGE_MS) return review('the restart event is younger than 15 minutes');
      const health = facts.appHealthy;
      if (health === undefined) return review('app health unavailable');
      if (!health.healthy) return review('the app is not currently healthy', [health.detail]);
      return ack('the app is healthy and the restart event is at least 15 minutes old', [
        health.detail,
        `event age ${Math.floor(facts.ageMs / 60000)} minutes`,
      ]);
    }
    case 'service.capacity.below_minimum': {
      const later = facts.laterCapacityRecovered ?? [];
      if (later.length === 0)
        return review('no later host-scoped service.capacity.recovered from the same source and environment');
      return ack(
        'a later host-scoped capacity recovery carries the same correlation key',
        later.map((id) => `later service.capacity.recovered ${id}`),
      );
    }
    default: {
      if (!CRON_TYPES.has(facts.type)) return review(`no evidence rule for ${facts.type}`);
      const parent = facts.periodicParent;
      if (parent === undefined) return review('periodic parent job unknown or scheduler unavailable');
      if (!parent.running) return review(`periodic parent ${parent.jobId} is not running`);
      if (parent.paused) return review(`periodic parent ${parent.jobId} is paused`);
      if (parent.activeChildren > 0)
        return review(`periodic parent ${parent.jobId} has ${parent.activeChildren} running or pending children`);
      const evidence = [`periodic parent ${parent.jobId} running and unpaused with no running or pending children`];
      const child = facts.referencedChild;
      if (child !== undefined) {
        if (child !== null && !child.terminal)
          return review(`referenced child ${child.allocationId} is not terminal`, evidence);
        evidence.push(
          child === null
            ? 'referenced child allocation is absent'
            : `referenced child ${child.allocationId} is terminal`,
        );
      }
      return ack('the periodic parent is healthy and idle', evidence);
    }
  }
}
