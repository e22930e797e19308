/**
 * Event reconciliation: for each open warning or critical, gathers the evidence its rule needs
 * from the event store, scheduler and registry, decides, and (unless dry run) acknowledges.
 */
import type { Db } from '../../store/database.js';
import type { Clock } from '../../domain/events/clock.js';
import { decideReconcile, type EvidenceFacts, type ReconcileAction } from '../../domain/events/evidence-rules.js';
import { laterEventIds, openAlertingEvents, type StoredEvent } from '../../store/control/events.js';
import type { EventService } from './event-service.js';
import {
  appHealth,
  findAllocation,
  periodicParent,
  runningHealthyJobs,
  serviceChecks,
  type Substrate,
} from './substrate-queries.js';

/** A reconcile request. */
export interface ReconcileRequest {
  readonly app?: string;
  /** @default 100 */
  readonly limit?: number;
  /** @default true: never changes state */
  readonly dryRun?: boolean;
  /** Operator recorded on acknowledgements. @default reconcile */
  readonly by?: string;
}

/** One event's reconciliation result. */
export interface ReconcileItem {
  readonly id: string;
  readonly type: string;
  readonly app: string;
  readonly action: ReconcileAction;
  readonly reason: string;
  readonly evidence: readonly string[];
  readonly applied: boolean;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

async function gather(
  db: Db,
  substrate: Substrate | undefined,
  event: StoredEvent,
  nowMs: number,
): Promise<EvidenceFacts> {
  const base = { type: event.type, ageMs: nowMs - Date.parse(event.occurredAt) };
  const md = event.metadata;
  switch (event.type) {
    case 'deploy.failed':
      return {
        ...base,
        laterDeploySucceeded: laterEventIds(db, event.seq, { type: 'deploy.succeeded', app: event.app }),
        runningHealthyJobs: substrate && event.app ? await runningHealthyJobs(substrate, event.app) : undefined,
      };
    case 'service.health.warning':
    case 'service.health.critical': {
      const process = str(md.process);
      return {
        ...base,
        laterHealthRecovered: laterEventIds(db, event.seq, {
          type: 'service.health.recovered',
          app: event.app,
          source: event.source,
          environment: event.environment,
          correlationKey: event.correlationKey,
        }),
        serviceChecks:
          substrate && process && event.app ? await serviceChecks(substrate, event.app, process) : undefined,
      };
    }
    case 'scheduler.task.restarted':
      return { ...base, appHealthy: substrate && event.app ? await appHealth(substrate, event.app) : undefined };
    case 'service.capacity.below_minimum':
      return {
        ...base,
        laterCapacityRecovered: laterEventIds(db, event.seq, {
          type: 'service.capacity.recovered',
          source: event.source,
          environment: event.environment,
          correlationKey: event.correlationKey,
        }),
      };
    case 'cron.failed':
    case 'cron.lost':
    case 'cron.hung':
    case 'cron.missed_run': {
      const jobId = str(md.jobId);
      const parent = substrate && jobId ? await periodicParent(substrate, jobId) : undefined;
      const allocationId = str(md.allocationId);
      let referencedChild: EvidenceFacts['referencedChild'];
      if (allocationId !== undefined && substrate) {
        const allocation = await findAllocation(substrate, allocationId);
        referencedChild = allocation
          ? { allocationId, terminal: ['complete', 'failed', 'lost'].includes(allocation.status) }
          : null;
      }
      return {
        ...base,
        periodicParent:
          parent && jobId
            ? {
                jobId,
                running: parent.job.status === 'running',
                paused: parent.job.paused,
                activeChildren: parent.activeChildren,
              }
            : undefined,
        referencedChild,
      };
    }
    default:
      return base;
  }
}

/** Reconciles open events of `request.app` (or all), at most `limit`, oldest first. */
export async function reconcileEvents(
  deps: { db: Db; clock: Clock; events: EventService; substrate: Substrate | undefined },
  request: ReconcileRequest,
): Promise<{ dryRun: boolean; items: ReconcileItem[] }> {
  const dryRun = request.dryRun ?? true;
  const nowMs = deps.clock.now();
  const open = openAlertingEvents(deps.db, nowMs, { app: request.app, limit: request.limit ?? 100 });
  const items: ReconcileItem[] = [];
  for (const event of open) {
    const decision = decideReconcile(await gather(deps.db, deps.substrate, event, nowMs));
    let applied = false;
    if (!dryRun && decision.action === 'acknowledge') {
      deps.events.acknowledge(event.id, { by: request.by ?? 'reconcile', note: `reconcile: ${decision.reason}` });
      applied = true;
    }
    items.push({
      id: event.id,
      type: event.type,
      app: event.app,
      action: decision.action,
      reason: decision.reason,
      evidence: decision.evidence,
      applied,
    });
  }
  return { dryRun, items };
}
