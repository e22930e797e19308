/**
 * Restricted mode's fleet records in control.db: device enrollments, capacity plans and runner
 * attempts.
 */
import type { Db } from '../database.js';
import type { PlanPullRequest } from '../../domain/fleet/fleet-repository-port.js';

/** A device enrollment request and its administrator decision. */
export interface DeviceEnrollment {
  readonly id: string;
  readonly name: string;
  readonly publicKeySha256: string;
  readonly requestedBy: string;
  readonly state: 'pending' | 'approved' | 'rejected';
  readonly requestedAt: string;
  readonly decidedAt: string | null;
  readonly decidedBy: string | null;
}

const enrollment = (r: Record<string, string | null>): DeviceEnrollment => ({
  id: r.id!,
  name: r.name!,
  publicKeySha256: r.public_key_sha256!,
  requestedBy: r.requested_by!,
  state: r.state as DeviceEnrollment['state'],
  requestedAt: r.requested_at!,
  decidedAt: r.decided_at ?? null,
  decidedBy: r.decided_by ?? null,
});

export function insertEnrollment(db: Db, e: Omit<DeviceEnrollment, 'state' | 'decidedAt' | 'decidedBy'>): void {
  db.prepare(
    "INSERT INTO device_enrollments (id, name, public_key_sha256, requested_by, state, requested_at) VALUES (?, ?, ?, ?, 'pending', ?)",
  ).run(e.id, e.name, e.publicKeySha256, e.requestedBy, e.requestedAt);
}
export function getEnrollment(db: Db, id: string): DeviceEnrollment | undefined {
  const row = db.prepare('SELECT * FROM device_enrollments WHERE id = ?').get(id) as
    Record<string, string | null> | undefined;
  return row && enrollment(row);
}
export function enrollmentByKey(db: Db, publicKeySha256: string): DeviceEnrollment | undefined {
  const row = db.prepare('SELECT * FROM device_enrollments WHERE public_key_sha256 = ?').get(publicKeySha256) as
    Record<string, string | null> | undefined;
  return row && enrollment(row);
}
export function listEnrollments(db: Db): DeviceEnrollment[] {
  return (
    db.prepare('SELECT * FROM device_enrollments ORDER BY requested_at DESC, id').all() as Record<
      string,
      string | null
    >[]
  ).map(enrollment);
}
/** Decides a pending enrollment; returns false when it was not pending. */
export function decideEnrollment(db: Db, id: string, state: 'approved' | 'rejected', by: string, now: Date): boolean {
  return (
    db
      .prepare(
        "UPDATE device_enrollments SET state = ?, decided_at = ?, decided_by = ? WHERE id = ? AND state = 'pending'",
      )
      .run(state, now.toISOString(), by, id).changes === 1
  );
}

/** A capacity plan: what a namespace asks of a node pool, and its digest. */
export interface FleetPlan {
  readonly id: string;
  readonly namespace: string;
  readonly nodePool: string;
  readonly plan: Readonly<Record<string, unknown>>;
  readonly planSha256: string;
  /** The pull request that proposes it in the fleet repository, once opened. */
  readonly pullRequest: PlanPullRequest | null;
  readonly createdAt: string;
  readonly createdBy: string;
}

const plan = (r: Record<string, string | null>): FleetPlan => ({
  id: r.id!,
  namespace: r.namespace!,
  nodePool: r.node_pool!,
  plan: JSON.parse(r.plan_json!) as Record<string, unknown>,
  planSha256: r.plan_sha256!,
  pullRequest: r.pull_request_json ? (JSON.parse(r.pull_request_json) as PlanPullRequest) : null,
  createdAt: r.created_at!,
  createdBy: r.created_by!,
});

/** Records the plan's pull request (once). */
export function recordPullRequest(db: Db, id: string, pullRequest: PlanPullRequest): boolean {
  return (
    db
      .prepare('UPDATE fleet_plans SET pull_request_json = ? WHERE id = ? AND pull_request_json IS NULL')
      .run(JSON.stringify(pullRequest), id).changes === 1
  );
}

export function insertPlan(db: Db, p: Omit<FleetPlan, 'pullRequest'>): void {
  db.prepare(
    'INSERT INTO fleet_plans (id, namespace, node_pool, plan_json, plan_sha256, created_at, created_by) VALUES (?, ?, ?, ?, ?, ?, ?)',
  ).run(p.id, p.namespace, p.nodePool, JSON.stringify(p.plan), p.planSha256, p.createdAt, p.createdBy);
}
export function getPlan(db: Db, id: string): FleetPlan | undefined {
  const row = db.prepare('SELECT * FROM fleet_plans WHERE id = ?').get(id) as Record<string, string | null> | undefined;
  return row && plan(row);
}
export function listPlans(db: Db, limit: number, offset: number): FleetPlan[] {
  return (
    db.prepare('SELECT * FROM fleet_plans ORDER BY created_at DESC, id LIMIT ? OFFSET ?').all(limit, offset) as Record<
      string,
      string | null
    >[]
  ).map(plan);
}

/** A runner attempt of a plan: it proves liveness only while unexpired. */
export interface FleetAttempt {
  readonly id: string;
  readonly planId: string;
  readonly runner: string;
  readonly dispatchedAt: string;
  readonly expiresAt: string;
  readonly finishedAt: string | null;
  readonly outcome: string | null;
}

const attempt = (r: Record<string, string | null>): FleetAttempt => ({
  id: r.id!,
  planId: r.plan_id!,
  runner: r.runner!,
  dispatchedAt: r.dispatched_at!,
  expiresAt: r.expires_at!,
  finishedAt: r.finished_at ?? null,
  outcome: r.outcome ?? null,
});

export function insertAttempt(db: Db, a: Omit<FleetAttempt, 'finishedAt' | 'outcome'>): void {
  db.prepare('INSERT INTO fleet_attempts (id, plan_id, runner, dispatched_at, expires_at) VALUES (?, ?, ?, ?, ?)').run(
    a.id,
    a.planId,
    a.runner,
    a.dispatchedAt,
    a.expiresAt,
  );
}
export function listPlanAttempts(db: Db, planId: string): FleetAttempt[] {
  return (
    db.prepare('SELECT * FROM fleet_attempts WHERE plan_id = ? ORDER BY dispatched_at DESC, id').all(planId) as Record<
      string,
      string | null
    >[]
  ).map(attempt);
}
/** Open (unfinished, unexpired) attempts of a plan. */
export function countOpenAttempts(db: Db, planId: string, now: Date): number {
  return (
    db
      .prepare('SELECT COUNT(*) AS n FROM fleet_attempts WHERE plan_id = ? AND finished_at IS NULL AND expires_at > ?')
      .get(planId, now.toISOString()) as { n: number }
  ).n;
}
/** Marks an attempt finished (reconciliation); false when it was already finished. */
export function finishAttempt(db: Db, id: string, outcome: string, now: Date): boolean {
  return (
    db
      .prepare('UPDATE fleet_attempts SET finished_at = ?, outcome = ? WHERE id = ? AND finished_at IS NULL')
      .run(now.toISOString(), outcome, id).changes === 1
  );
}
/** Attempts that expired without finishing. */
export function listExpiredOpenAttempts(db: Db, now: Date, limit: number): FleetAttempt[] {
  return (
    db
      .prepare('SELECT * FROM fleet_attempts WHERE finished_at IS NULL AND expires_at <= ? ORDER BY expires_at LIMIT ?')
      .all(now.toISOString(), limit) as Record<string, string | null>[]
  ).map(attempt);
}
