/**
 * Restricted mode's fleet authority: the inventory of the one fleet document, capacity plans (with
 * their canonical SHA-256), dispatch of a plan to a runner as an attempt with a lease, runner
 * attempts (only an unexpired attempt proves liveness), reconciliation of attempts whose lease
 * ran out, operation reads, and device enrollment with administrator approval. Every mutation is
 * audited.
 */
import { createHash, randomBytes } from 'node:crypto';
import { canonicalDigest, canonicalJson } from '../../domain/canonical-json.js';
import type { FleetRepository } from '../../domain/fleet/fleet-repository-port.js';
import { ConflictError, NotFoundError, ValidationError } from '../../domain/errors.js';
import { exactObject } from '../../domain/fleet/admission-identity.js';
import type { FleetDocument } from '../../schemas/types.generated.js';
import type { Db } from '../../store/database.js';
import {
  countOpenAttempts,
  decideEnrollment,
  recordPullRequest,
  enrollmentByKey,
  finishAttempt,
  getEnrollment,
  getPlan,
  insertAttempt,
  insertEnrollment,
  insertPlan,
  listEnrollments,
  listExpiredOpenAttempts,
  listPlanAttempts,
  listPlans,
  type DeviceEnrollment,
  type FleetAttempt,
  type FleetPlan,
} from '../../store/control/fleet-records.js';
import { getOperation, listAttempts, type OperationAttempt } from '../../store/control/operations/operations.js';
import type { Operation } from '../../domain/operations/index.js';
import type { FleetAudit } from './fleet-audit.js';

/** Default and longest lease of a dispatched attempt. */
export const ATTEMPT_LEASE_MS = 10 * 60_000;
export const MAX_ATTEMPT_LEASE_MS = 6 * 3_600_000;

const NAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

function invalid(field: string, rule: string): never {
  throw new ValidationError(`${field}: ${rule}`, { code: 'invalid_request', details: { field } });
}
function wholeNumber(value: unknown, field: string, max: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > max)
    invalid(field, `must be a whole number in 1-${max}`);
  return value;
}

/** An attempt as the API shows it. */
export type AttemptView = FleetAttempt & { readonly live: boolean };

export class FleetAuthority {
  constructor(
    private readonly options: {
      readonly db: Db;
      readonly fleet: FleetDocument;
      readonly audit: FleetAudit;
      readonly repository: FleetRepository;
      readonly now?: () => Date;
    },
  ) {}

  /** The fleet document's identity and node pools. */
  inventory(): {
    fleet: string;
    environment: string | undefined;
    nodePools: FleetDocument['nodePools'];
    plans: number;
  } {
    const f = this.options.fleet;
    return {
      fleet: f.metadata.name,
      environment: f.metadata.environment,
      nodePools: f.nodePools,
      plans: listPlans(this.options.db, 10_000, 0).length,
    };
  }

  /** Records a capacity plan `{ namespace, nodePool, processes: [{ name, count, cpu, memory }] }`. */
  createPlan(body: unknown, by: string): FleetPlan {
    const request = exactObject(body, 'body', ['namespace', 'nodePool', 'processes']);
    if (typeof request.namespace !== 'string' || !NAME.test(request.namespace))
      invalid('body.namespace', 'must be a DNS label');
    if (typeof request.nodePool !== 'string' || !this.options.fleet.nodePools.some((p) => p.name === request.nodePool))
      invalid('body.nodePool', `must name a node pool of fleet ${this.options.fleet.metadata.name}`);
    if (!Array.isArray(request.processes) || request.processes.length === 0 || request.processes.length > 64)
      invalid('body.processes', 'must list 1-64 processes');
    const processes = request.processes.map((p: unknown, i: number) => {
      const o = exactObject(p, `body.processes[${i}]`, ['name', 'count', 'cpu', 'memory']);
      if (typeof o.name !== 'string' || !NAME.test(o.name)) invalid(`body.processes[${i}].name`, 'must be a DNS label');
      return {
        name: o.name,
        count: wholeNumber(o.count, `body.processes[${i}].count`, 1000),
        cpu: wholeNumber(o.cpu, `body.processes[${i}].cpu`, 1_000_000),
        memory: wholeNumber(o.memory, `body.processes[${i}].memory`, 10_000_000),
      };
    });
    if (new Set(processes.map((p) => p.name)).size !== processes.length)
      invalid('body.processes', 'names must be unique');
    const totals = { count: 0, cpu: 0, memory: 0 };
    for (const p of processes) {
      totals.count += p.count;
      totals.cpu += p.count * p.cpu;
      totals.memory += p.count * p.memory;
    }
    const plan = { namespace: request.namespace, nodePool: request.nodePool, processes, totals };
    const record: FleetPlan = {
      id: `plan_${randomBytes(8).toString('hex')}`,
      namespace: plan.namespace,
      nodePool: plan.nodePool,
      plan,
      planSha256: canonicalDigest(plan),
      pullRequest: null,
      createdAt: this.now().toISOString(),
      createdBy: by,
    };
    insertPlan(this.options.db, record);
    this.options.audit.record(by, 'fleet.plan.created', record.id, {
      planSha256: record.planSha256,
      nodePool: record.nodePool,
    });
    return record;
  }

  plans(limit: number, offset: number): FleetPlan[] {
    return listPlans(this.options.db, limit, offset);
  }

  plan(id: string): FleetPlan {
    const plan = getPlan(this.options.db, id);
    if (plan === undefined)
      throw new NotFoundError(`no capacity plan ${id}`, { code: 'plan_not_found', details: { planId: id } });
    return plan;
  }

  /** Proposes the plan in the fleet repository: a branch, the canonical plan file and a pull request (once per plan). */
  async openPullRequest(planId: string, by: string): Promise<FleetPlan> {
    const plan = this.plan(planId);
    if (plan.pullRequest !== null)
      throw new ConflictError(`plan ${plan.id} already has pull request #${plan.pullRequest.number}`, {
        code: 'pull_request_exists',
        details: { planId: plan.id, pullRequest: plan.pullRequest },
      });
    const pullRequest = await this.options.repository.openPullRequest({
      branch: `svc/${plan.id}`,
      path: `plans/${plan.namespace}/${plan.id}.json`,
      content: `${canonicalJson({ id: plan.id, planSha256: plan.planSha256, ...plan.plan })}\n`,
      title: `Capacity plan ${plan.id} for ${plan.namespace} on ${plan.nodePool}`,
      body: `Proposed by the fleet authority (${by}).\n\nplanSha256: ${plan.planSha256}`,
    });
    recordPullRequest(this.options.db, plan.id, pullRequest);
    this.options.audit.record(by, 'fleet.plan.pull_request', plan.id, {
      number: pullRequest.number,
      branch: pullRequest.branch,
      planSha256: plan.planSha256,
    });
    return this.plan(plan.id);
  }

  /**
   * Dispatches a plan to a runner: a new attempt with a lease (one open attempt per plan), then the
   * bound runner workflow is started on the git host with the attempt's ids. When the git host
   * refuses, the attempt ends at once (`dispatch_failed`) so it does not block the plan.
   */
  async dispatch(planId: string, body: unknown, by: string): Promise<AttemptView> {
    const plan = this.plan(planId);
    const request = exactObject(
      body ?? {},
      'body',
      Object.keys((body as object | undefined) ?? {}).filter((k) => ['runner', 'leaseSeconds'].includes(k)),
    );
    if (typeof request.runner !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/.test(request.runner))
      invalid('body.runner', 'must name the runner (letters, digits, . _ : -)');
    const leaseMs =
      request.leaseSeconds === undefined
        ? ATTEMPT_LEASE_MS
        : wholeNumber(request.leaseSeconds, 'body.leaseSeconds', MAX_ATTEMPT_LEASE_MS / 1000) * 1000;
    const now = this.now();
    const db = this.options.db;
    // Counts open attempts, then inserts: under the write lock from the start (see FleetAudit.record).
    const attempt = db
      .transaction(() => {
        if (countOpenAttempts(db, plan.id, now) > 0)
          throw new ConflictError(`plan ${plan.id} already has a live attempt; wait for it or reconcile`, {
            code: 'attempt_in_progress',
            details: { planId: plan.id },
          });
        const a = {
          id: `att_${randomBytes(8).toString('hex')}`,
          planId: plan.id,
          runner: request.runner as string,
          dispatchedAt: now.toISOString(),
          expiresAt: new Date(now.getTime() + leaseMs).toISOString(),
        };
        insertAttempt(db, a);
        return a;
      })
      .immediate();
    try {
      await this.options.repository.dispatchWorkflow({
        planId: plan.id,
        planSha256: plan.planSha256,
        attemptId: attempt.id,
        runner: attempt.runner,
      });
    } catch (error) {
      finishAttempt(db, attempt.id, 'dispatch_failed', this.now());
      this.options.audit.record(by, 'fleet.plan.dispatch_failed', plan.id, { attemptId: attempt.id });
      throw error;
    }
    this.options.audit.record(by, 'fleet.plan.dispatched', plan.id, {
      attemptId: attempt.id,
      runner: attempt.runner,
      planSha256: plan.planSha256,
      expiresAt: attempt.expiresAt,
    });
    return { ...attempt, finishedAt: null, outcome: null, live: true };
  }

  /** A plan's attempts, newest first; `live` only while unfinished and unexpired. */
  attempts(planId: string): { planId: string; live: boolean; attempts: AttemptView[] } {
    const plan = this.plan(planId);
    const now = this.now().getTime();
    const attempts = listPlanAttempts(this.options.db, plan.id).map((a) => ({
      ...a,
      live: a.finishedAt === null && Date.parse(a.expiresAt) > now,
    }));
    return { planId: plan.id, live: attempts.some((a) => a.live), attempts };
  }

  /** Attempts whose lease ran out without an outcome: reported, and with `dryRun: false` marked expired. */
  reconcile(
    body: unknown,
    by: string,
  ): { dryRun: boolean; attempts: { id: string; planId: string; action: 'mark_expired' }[] } {
    const request = exactObject(
      body ?? {},
      'body',
      Object.keys((body as object | undefined) ?? {}).filter((k) => k === 'dryRun'),
    );
    if (request.dryRun !== undefined && typeof request.dryRun !== 'boolean')
      invalid('body.dryRun', 'must be a boolean');
    const dryRun = request.dryRun !== false;
    const now = this.now();
    const expired = listExpiredOpenAttempts(this.options.db, now, 500);
    if (!dryRun) {
      for (const a of expired)
        if (finishAttempt(this.options.db, a.id, 'expired', now))
          this.options.audit.record(by, 'fleet.attempt.expired', a.planId, { attemptId: a.id });
    }
    return { dryRun, attempts: expired.map((a) => ({ id: a.id, planId: a.planId, action: 'mark_expired' as const })) };
  }

  /** One operation with its attempts. */
  operation(id: string): Operation & { attemptHistory: OperationAttempt[] } {
    const op = getOperation(this.options.db, id);
    if (!op) throw new NotFoundError(`operation "${id}" does not exist`, { code: 'operation_not_found' });
    return { ...op, attemptHistory: listAttempts(this.options.db, id) };
  }

  /** A device asks to be enrolled with its public key (PEM); it is pending until an administrator decides. */
  requestEnrollment(body: unknown, requestedBy: string): DeviceEnrollment {
    const request = exactObject(body, 'body', ['name', 'publicKey']);
    if (typeof request.name !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9 ._@-]{0,99}$/.test(request.name))
      invalid('body.name', 'must be 1-100 letters, digits, spaces and . _ @ -');
    if (
      typeof request.publicKey !== 'string' ||
      !/^-----BEGIN PUBLIC KEY-----\n[A-Za-z0-9+/=\n]+-----END PUBLIC KEY-----\n?$/.test(request.publicKey) ||
      request.publicKey.length > 4096
    )
      invalid('body.publicKey', 'must be a PEM public key (SPKI)');
    const fingerprint = createHash('sha256').update(request.publicKey.trim()).digest('hex');
    const existing = enrollmentByKey(this.options.db, fingerprint);
    if (existing !== undefined)
      throw new ConflictError(`this device key is already enrolled (${existing.state})`, {
        code: 'device_already_enrolled',
        details: { id: existing.id, state: existing.state },
      });
    const id = `dev_${randomBytes(8).toString('hex')}`;
    insertEnrollment(this.options.db, {
      id,
      name: request.name,
      publicKeySha256: fingerprint,
      requestedBy,
      requestedAt: this.now().toISOString(),
    });
    this.options.audit.record(requestedBy, 'device.enrollment.requested', id, { publicKeySha256: fingerprint });
    return getEnrollment(this.options.db, id)!;
  }

  enrollments(): DeviceEnrollment[] {
    return listEnrollments(this.options.db);
  }

  enrollment(id: string): DeviceEnrollment {
    const e = getEnrollment(this.options.db, id);
    if (e === undefined)
      throw new NotFoundError(`no device enrollment ${id}`, { code: 'enrollment_not_found', details: { id } });
    return e;
  }

  /** An administrator approves or rejects a pending enrollment. */
  decideEnrollment(id: string, decision: 'approved' | 'rejected', by: string): DeviceEnrollment {
    const current = this.enrollment(id);
    if (!decideEnrollment(this.options.db, id, decision, by, this.now()))
      throw new ConflictError(`enrollment ${id} is already ${current.state}`, {
        code: 'enrollment_already_decided',
        details: { id, state: current.state },
      });
    this.options.audit.record(by, `device.enrollment.${decision}`, id, { publicKeySha256: current.publicKeySha256 });
    return this.enrollment(id);
  }

  private now(): Date {
    return (this.options.now ?? (() => new Date()))();
  }
}
