/**
 * Deployments (one saga each) in control.db: the record of a deploy, preflight or rollback, its
 * step checkpoints and one region row per selected region. The release history for rollback is
 * the list of succeeded deploy and rollback deployments.
 */
import { randomBytes } from 'node:crypto';
import type { CanonicalAppSpec } from '../../domain/spec/index.js';
import type { Db } from '../database.js';

/** Status of a deployment. */
export const DeploymentStatus = {
  queued: 'queued',
  running: 'running',
  succeeded: 'succeeded',
  failed: 'failed',
  /** Failed at the health gate and replaced by a rollback to the previous release. */
  rolledBack: 'rolled_back',
  cancelled: 'cancelled',
} as const;
export type DeploymentStatus = (typeof DeploymentStatus)[keyof typeof DeploymentStatus];

/** What a deployment was: a deploy, a read-only preflight or a rollback. */
export type DeploymentKind = 'deploy' | 'preflight' | 'rollback';

/** A deployment record. */
export interface Deployment {
  readonly id: string;
  readonly sagaId: string;
  readonly operationId: string | null;
  readonly app: string;
  readonly kind: DeploymentKind;
  readonly status: DeploymentStatus;
  readonly ref: string | null;
  readonly commit: string | null;
  /** The release it runs: `{ commit, dir }`. */
  readonly release: { readonly commit: string; readonly dir: string } | null;
  readonly previousDeploymentId: string | null;
  readonly failedStep: string | null;
  readonly message: string | null;
  /** api, webhook, deploy-group:<name>, auto-rollback. */
  readonly trigger: string;
  readonly createdAt: string;
  readonly startedAt: string | null;
  readonly finishedAt: string | null;
}

/** One step checkpoint. */
export interface DeploymentStepRow {
  readonly seq: number;
  readonly step: string;
  readonly status: 'running' | 'succeeded' | 'failed' | 'skipped';
  readonly message: string | null;
  /** Captured output (tests, builds), tail only. */
  readonly output: string | null;
  readonly startedAt: string;
  readonly endedAt: string | null;
}

/** One region of a deployment. */
export interface DeploymentRegionRow {
  readonly region: string;
  readonly status: string;
  readonly updatedAt: string;
}

interface RawDeployment {
  id: string;
  saga_id: string;
  operation_id: string | null;
  app: string;
  kind: string;
  status: string;
  ref: string | null;
  commit_sha: string | null;
  release_json: string | null;
  previous_deployment_id: string | null;
  failed_step: string | null;
  message: string | null;
  trigger: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

function fromRaw(raw: RawDeployment): Deployment {
  return {
    id: raw.id,
    sagaId: raw.saga_id,
    operationId: raw.operation_id,
    app: raw.app,
    kind: raw.kind as DeploymentKind,
    status: raw.status as DeploymentStatus,
    ref: raw.ref,
    commit: raw.commit_sha,
    release: raw.release_json === null ? null : (JSON.parse(raw.release_json) as Deployment['release']),
    previousDeploymentId: raw.previous_deployment_id,
    failedStep: raw.failed_step,
    message: raw.message,
    trigger: raw.trigger,
    createdAt: raw.created_at,
    startedAt: raw.started_at,
    finishedAt: raw.finished_at,
  };
}

/** New ids: `dep_…` for deployments, `saga_…` for sagas. */
export function newDeploymentIds(): { id: string; sagaId: string } {
  return { id: `dep_${randomBytes(10).toString('hex')}`, sagaId: `saga_${randomBytes(10).toString('hex')}` };
}

/** Records a queued deployment with its region rows. */
export function createDeployment(
  db: Db,
  input: {
    id: string;
    sagaId: string;
    operationId: string | null;
    app: string;
    kind: DeploymentKind;
    ref: string | null;
    trigger: string;
    regions: readonly string[];
    release?: Deployment['release'];
    previousDeploymentId?: string | null;
  },
  now = new Date(),
): Deployment {
  const at = now.toISOString();
  db.prepare(
    `INSERT INTO deployments (id, saga_id, operation_id, app, kind, status, ref, commit_sha, release_json, previous_deployment_id, trigger, created_at)
     VALUES (?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?)`,
  ).run(
    input.id,
    input.sagaId,
    input.operationId,
    input.app,
    input.kind,
    input.ref,
    input.release?.commit ?? null,
    input.release ? JSON.stringify(input.release) : null,
    input.previousDeploymentId ?? null,
    input.trigger,
    at,
  );
  const region = db.prepare(
    "INSERT INTO deployment_regions (deployment_id, region, status, updated_at) VALUES (?, ?, 'queued', ?)",
  );
  for (const r of input.regions) region.run(input.id, r, at);
  return getDeployment(db, input.id)!;
}

/** One deployment by id. */
export function getDeployment(db: Db, id: string): Deployment | undefined {
  const raw = db.prepare('SELECT * FROM deployments WHERE id = ?').get(id) as RawDeployment | undefined;
  return raw && fromRaw(raw);
}

/** One deployment by saga id. */
export function getDeploymentBySaga(db: Db, sagaId: string): Deployment | undefined {
  const raw = db.prepare('SELECT * FROM deployments WHERE saga_id = ?').get(sagaId) as RawDeployment | undefined;
  return raw && fromRaw(raw);
}

/** Deployments, newest first. */
export function listDeployments(
  db: Db,
  filter: { app?: string; kind?: DeploymentKind; status?: DeploymentStatus; limit?: number; offset?: number } = {},
): Deployment[] {
  const where: string[] = [];
  const args: unknown[] = [];
  for (const [column, value] of [
    ['app', filter.app],
    ['kind', filter.kind],
    ['status', filter.status],
  ] as const) {
    if (value === undefined) continue;
    where.push(`${column} = ?`);
    args.push(value);
  }
  const sql = `SELECT * FROM deployments ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?`;
  return (db.prepare(sql).all(...args, filter.limit ?? 50, filter.offset ?? 0) as RawDeployment[]).map(fromRaw);
}

/** Updates the status (and optionally commit, release, failed step, message) of a deployment. */
export function updateDeployment(
  db: Db,
  id: string,
  patch: {
    status?: DeploymentStatus;
    commit?: string;
    release?: Deployment['release'];
    failedStep?: string | null;
    message?: string | null;
    started?: boolean;
    finished?: boolean;
    regionStatus?: string;
  },
  now = new Date(),
): void {
  const at = now.toISOString();
  const current = getDeployment(db, id);
  if (!current) return;
  db.prepare(
    `UPDATE deployments SET status = ?, commit_sha = ?, release_json = ?, failed_step = ?, message = ?, started_at = ?, finished_at = ? WHERE id = ?`,
  ).run(
    patch.status ?? current.status,
    patch.commit ?? current.commit,
    patch.release !== undefined
      ? JSON.stringify(patch.release)
      : current.release
        ? JSON.stringify(current.release)
        : null,
    patch.failedStep !== undefined ? patch.failedStep : current.failedStep,
    patch.message !== undefined ? patch.message : current.message,
    patch.started ? (current.startedAt ?? at) : current.startedAt,
    patch.finished ? at : current.finishedAt,
    id,
  );
  if (patch.regionStatus !== undefined)
    db.prepare('UPDATE deployment_regions SET status = ?, updated_at = ? WHERE deployment_id = ?').run(
      patch.regionStatus,
      at,
      id,
    );
}

/** Opens a step checkpoint; returns its sequence number. */
export function startStep(db: Db, deploymentId: string, step: string, now = new Date()): number {
  const row = db
    .prepare('SELECT COALESCE(MAX(seq), 0) + 1 AS seq FROM deployment_steps WHERE deployment_id = ?')
    .get(deploymentId) as { seq: number };
  db.prepare(
    "INSERT INTO deployment_steps (deployment_id, seq, step, status, started_at) VALUES (?, ?, ?, 'running', ?)",
  ).run(deploymentId, row.seq, step, now.toISOString());
  return row.seq;
}

/** Closes a step checkpoint with its outcome. */
export function endStep(
  db: Db,
  deploymentId: string,
  seq: number,
  outcome: { status: 'succeeded' | 'failed' | 'skipped'; message?: string; output?: string },
  now = new Date(),
): void {
  db.prepare(
    'UPDATE deployment_steps SET status = ?, message = ?, output = ?, ended_at = ? WHERE deployment_id = ? AND seq = ?',
  ).run(outcome.status, outcome.message ?? null, outcome.output ?? null, now.toISOString(), deploymentId, seq);
}

/** Records a skipped step (start and end at once). */
export function skipStep(db: Db, deploymentId: string, step: string, reason: string, now = new Date()): void {
  const seq = startStep(db, deploymentId, step, now);
  endStep(db, deploymentId, seq, { status: 'skipped', message: reason }, now);
}

/** Closes steps left running by an interrupted attempt. */
export function closeOpenSteps(db: Db, deploymentId: string, message: string, now = new Date()): void {
  db.prepare(
    "UPDATE deployment_steps SET status = 'failed', message = ?, ended_at = ? WHERE deployment_id = ? AND status = 'running'",
  ).run(message, now.toISOString(), deploymentId);
}

/** The steps of a deployment, in order. */
export function listSteps(db: Db, deploymentId: string): DeploymentStepRow[] {
  return (
    db.prepare('SELECT * FROM deployment_steps WHERE deployment_id = ? ORDER BY seq').all(deploymentId) as {
      seq: number;
      step: string;
      status: DeploymentStepRow['status'];
      message: string | null;
      output: string | null;
      started_at: string;
      ended_at: string | null;
    }[]
  ).map((r) => ({
    seq: r.seq,
    step: r.step,
    status: r.status,
    message: r.message,
    output: r.output,
    startedAt: r.started_at,
    endedAt: r.ended_at,
  }));
}

/** The region rows of a deployment. */
export function listRegions(db: Db, deploymentId: string): DeploymentRegionRow[] {
  return (
    db
      .prepare('SELECT region, status, updated_at FROM deployment_regions WHERE deployment_id = ? ORDER BY region')
      .all(deploymentId) as { region: string; status: string; updated_at: string }[]
  ).map((r) => ({ region: r.region, status: r.status, updatedAt: r.updated_at }));
}

/** The most recent succeeded deploy or rollback of an app (what runs), excluding `exceptId`. */
export function lastSuccessfulRelease(db: Db, app: string, exceptId?: string): Deployment | undefined {
  const raw = db
    .prepare(
      "SELECT * FROM deployments WHERE app = ? AND kind IN ('deploy', 'rollback') AND status = 'succeeded' AND release_json IS NOT NULL AND id != ? ORDER BY finished_at DESC, rowid DESC LIMIT 1",
    )
    .get(app, exceptId ?? '') as RawDeployment | undefined;
  return raw && fromRaw(raw);
}

/** True when a deploy of `commit` for `app` was rolled back (auto-deploy must not re-apply it). */
export function wasRolledBack(db: Db, app: string, commit: string): boolean {
  return (
    db
      .prepare("SELECT 1 FROM deployments WHERE app = ? AND commit_sha = ? AND status = 'rolled_back' LIMIT 1")
      .get(app, commit) !== undefined
  );
}

/** Commits of the releases recent succeeded deployments of an app use (releases to keep for rollback). */
export function releasesToKeep(db: Db, app: string, count: number): string[] {
  return (
    db
      .prepare(
        "SELECT DISTINCT commit_sha FROM deployments WHERE app = ? AND status = 'succeeded' AND commit_sha IS NOT NULL ORDER BY finished_at DESC LIMIT ?",
      )
      .all(app, count) as { commit_sha: string }[]
  ).map((r) => r.commit_sha);
}

/** Records the canonical spec a deployment submitted (what a rollback to it restores). */
export function recordDeploymentSpec(db: Db, id: string, spec: CanonicalAppSpec): void {
  db.prepare('UPDATE deployments SET spec_json = ? WHERE id = ?').run(JSON.stringify(spec), id);
}

/** The canonical spec a deployment submitted; null for deployments recorded before specs were kept. */
export function deploymentSpec(db: Db, id: string): CanonicalAppSpec | null {
  const row = db.prepare('SELECT spec_json FROM deployments WHERE id = ?').get(id) as
    { spec_json: string | null } | undefined;
  return row?.spec_json ? (JSON.parse(row.spec_json) as CanonicalAppSpec) : null;
}
