/**
 * External admissions in control.db: the admission rows, their nonce hashes, and the commit that
 * writes the immutable successful app.deploy operation with its deployment history in one
 * transaction. Raw nonces are never stored; only their SHA-256.
 */
import type { Db } from '../database.js';
import type { AdmissionState } from '../../domain/fleet/admission-lifecycle.js';
import type { LogicalIdentity } from '../../domain/fleet/admission-identity.js';
import type { CheckpointRef, EvidenceSnapshot } from '../../domain/fleet/evidence-port.js';
import type { ProofDigests } from '../../domain/fleet/receipt-v4.js';

/** A stored admission. */
export interface AdmissionRecord {
  readonly id: string;
  readonly app: string;
  readonly idempotencyKey: string;
  readonly requestDigest: string;
  readonly identity: LogicalIdentity;
  readonly repository: string;
  readonly runId: string;
  readonly state: AdmissionState;
  readonly generation: number;
  readonly evidenceRevision: number;
  readonly receiptDigest: string | null;
  readonly proofDigests: ProofDigests | null;
  readonly snapshot: EvidenceSnapshot | null;
  readonly snapshotDigest: string | null;
  readonly operationId: string | null;
  readonly operationDigest: string | null;
  readonly deploymentId: string | null;
  readonly cleanupIntentDigest: string | null;
  readonly absenceProofDigest: string | null;
  readonly commitPending: boolean;
  readonly retryLineage: readonly string[];
  readonly checkpoints: readonly CheckpointRef[];
  readonly createdAt: string;
  readonly updatedAt: string;
}

interface Row {
  id: string;
  app: string;
  idempotency_key: string;
  request_digest: string;
  logical_json: string;
  repository: string;
  run_id: string;
  state: string;
  generation: number;
  evidence_revision: number;
  receipt_digest: string | null;
  proof_digests_json: string | null;
  snapshot_json: string | null;
  snapshot_digest: string | null;
  operation_id: string | null;
  operation_digest: string | null;
  deployment_id: string | null;
  cleanup_intent_digest: string | null;
  absence_proof_digest: string | null;
  commit_pending: number;
  retry_lineage_json: string;
  checkpoints_json: string;
  created_at: string;
  updated_at: string;
}

function toRecord(row: Row): AdmissionRecord {
  return {
    id: row.id,
    app: row.app,
    idempotencyKey: row.idempotency_key,
    requestDigest: row.request_digest,
    identity: JSON.parse(row.logical_json) as LogicalIdentity,
    repository: row.repository,
    runId: row.run_id,
    state: row.state as AdmissionState,
    generation: row.generation,
    evidenceRevision: row.evidence_revision,
    receiptDigest: row.receipt_digest,
    proofDigests: row.proof_digests_json === null ? null : (JSON.parse(row.proof_digests_json) as ProofDigests),
    snapshot: row.snapshot_json === null ? null : (JSON.parse(row.snapshot_json) as EvidenceSnapshot),
    snapshotDigest: row.snapshot_digest,
    operationId: row.operation_id,
    operationDigest: row.operation_digest,
    deploymentId: row.deployment_id,
    cleanupIntentDigest: row.cleanup_intent_digest,
    absenceProofDigest: row.absence_proof_digest,
    commitPending: row.commit_pending === 1,
    retryLineage: JSON.parse(row.retry_lineage_json) as string[],
    checkpoints: JSON.parse(row.checkpoints_json) as CheckpointRef[],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** A nonce hash row. */
export interface NonceRow {
  readonly nonceSha256: string;
  readonly generation: number;
  readonly runKey: string;
  readonly issuedAt: string;
  readonly expiresAt: string;
}

export function getAdmission(db: Db, id: string): AdmissionRecord | undefined {
  const row = db.prepare('SELECT * FROM external_admissions WHERE id = ?').get(id) as Row | undefined;
  return row && toRecord(row);
}

export function getAdmissionByKey(db: Db, idempotencyKey: string): AdmissionRecord | undefined {
  const row = db.prepare('SELECT * FROM external_admissions WHERE idempotency_key = ?').get(idempotencyKey) as
    Row | undefined;
  return row && toRecord(row);
}

/** Admissions whose evidence commit was not acknowledged (reconcile candidates). */
export function listCommitPending(db: Db): AdmissionRecord[] {
  return (
    db.prepare('SELECT * FROM external_admissions WHERE commit_pending = 1 ORDER BY created_at').all() as Row[]
  ).map(toRecord);
}

/** Unconsumed, unreplaced, unexpired nonces of one CI run. */
export function countUnconsumedNonces(db: Db, runKey: string, now: Date): number {
  return (
    db
      .prepare(
        'SELECT COUNT(*) AS n FROM external_admission_nonces WHERE run_key = ? AND consumed_at IS NULL AND replaced_at IS NULL AND expires_at > ?',
      )
      .get(runKey, now.toISOString()) as { n: number }
  ).n;
}

/** Removes at most `limit` expired nonce rows; returns how many went. */
export function deleteExpiredNonces(db: Db, now: Date, limit: number): number {
  return db
    .prepare(
      'DELETE FROM external_admission_nonces WHERE rowid IN (SELECT rowid FROM external_admission_nonces WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)',
    )
    .run(now.toISOString(), limit).changes;
}

/** The nonce row of an admission's generation, if it still exists. */
export function getNonce(
  db: Db,
  admissionId: string,
  generation: number,
): (NonceRow & { readonly consumedAt: string | null; readonly replacedAt: string | null }) | undefined {
  const row = db
    .prepare('SELECT * FROM external_admission_nonces WHERE admission_id = ? AND generation = ?')
    .get(admissionId, generation) as
    | {
        nonce_sha256: string;
        generation: number;
        run_key: string;
        issued_at: string;
        expires_at: string;
        consumed_at: string | null;
        replaced_at: string | null;
      }
    | undefined;
  return (
    row && {
      nonceSha256: row.nonce_sha256,
      generation: row.generation,
      runKey: row.run_key,
      issuedAt: row.issued_at,
      expiresAt: row.expires_at,
      consumedAt: row.consumed_at,
      replacedAt: row.replaced_at,
    }
  );
}

/** Records a registered admission and its first nonce hash. */
export function insertAdmission(
  db: Db,
  input: {
    id: string;
    app: string;
    idempotencyKey: string;
    requestDigest: string;
    identity: LogicalIdentity;
    repository: string;
    runId: string;
    revision: number;
    nonce: NonceRow;
  },
  now: Date,
): AdmissionRecord {
  const at = now.toISOString();
  db.transaction(() => {
    db.prepare(
      `INSERT INTO external_admissions (id, app, idempotency_key, request_digest, logical_json, repository, run_id, state, generation, evidence_revision, retry_lineage_json, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, 'registered', ?, ?, ?, ?, ?)`,
    ).run(
      input.id,
      input.app,
      input.idempotencyKey,
      input.requestDigest,
      JSON.stringify(input.identity),
      input.repository,
      input.runId,
      input.nonce.generation,
      input.revision,
      JSON.stringify([input.identity.rootAttemptId]),
      at,
      at,
    );
    insertNonce(db, input.id, input.nonce);
  })();
  return getAdmission(db, input.id)!;
}

function insertNonce(db: Db, admissionId: string, nonce: NonceRow): void {
  db.prepare(
    'INSERT INTO external_admission_nonces (nonce_sha256, admission_id, generation, run_key, issued_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)',
  ).run(nonce.nonceSha256, admissionId, nonce.generation, nonce.runKey, nonce.issuedAt, nonce.expiresAt);
}

/** Replaces the admission's nonce: older generations are marked replaced, the new hash recorded. */
export function replaceNonce(
  db: Db,
  admissionId: string,
  nonce: NonceRow,
  revision: number,
  now: Date,
): AdmissionRecord {
  const at = now.toISOString();
  db.transaction(() => {
    db.prepare(
      'UPDATE external_admission_nonces SET replaced_at = ? WHERE admission_id = ? AND replaced_at IS NULL AND consumed_at IS NULL',
    ).run(at, admissionId);
    insertNonce(db, admissionId, nonce);
    // A claim of an older generation belongs to that generation: the replacement starts unclaimed.
    db.prepare(
      "UPDATE external_admissions SET generation = ?, evidence_revision = ?, receipt_digest = NULL, proof_digests_json = NULL, snapshot_json = NULL, snapshot_digest = NULL, updated_at = ? WHERE id = ? AND state = 'registered'",
    ).run(nonce.generation, revision, at, admissionId);
  })();
  return getAdmission(db, admissionId)!;
}

/** Consumes the nonce of the current generation; false when it is gone, expired, replaced or consumed. */
export function consumeNonce(db: Db, admissionId: string, generation: number, now: Date): boolean {
  const at = now.toISOString();
  return (
    db
      .prepare(
        'UPDATE external_admission_nonces SET consumed_at = ? WHERE admission_id = ? AND generation = ? AND consumed_at IS NULL AND replaced_at IS NULL AND expires_at > ?',
      )
      .run(at, admissionId, generation, at).changes === 1
  );
}

/** Records the claim's revision and snapshot on a registered admission. */
export function recordClaim(
  db: Db,
  id: string,
  input: { revision: number; receiptDigest: string; proofDigests: ProofDigests; snapshot: EvidenceSnapshot },
  now: Date,
): void {
  db.prepare(
    "UPDATE external_admissions SET evidence_revision = ?, receipt_digest = ?, proof_digests_json = ?, snapshot_json = ?, snapshot_digest = ?, retry_lineage_json = ?, checkpoints_json = ?, updated_at = ? WHERE id = ? AND state = 'registered'",
  ).run(
    input.revision,
    input.receiptDigest,
    JSON.stringify(input.proofDigests),
    JSON.stringify(input.snapshot),
    input.snapshot.digest,
    JSON.stringify(input.snapshot.retryLineage),
    JSON.stringify(input.snapshot.checkpointRefs),
    now.toISOString(),
    id,
  );
}

/** What the commit writes. */
export interface CommitInput {
  readonly admissionId: string;
  readonly operationId: string;
  readonly operationDigest: string;
  readonly operationPayload: Readonly<Record<string, unknown>>;
  readonly deploymentId: string;
  readonly sagaId: string;
  readonly commit: string;
  readonly image: string;
  readonly regions: readonly string[];
  readonly cleanupIntentDigest: string;
  readonly message: string;
}

/**
 * The commit, in one transaction: an immutable succeeded app.deploy operation (one attempt, no
 * retries), a succeeded deployment with its step and verified region rows, and the admission moved
 * to committed with its evidence commit pending.
 */
export function commitAdmission(db: Db, app: string, input: CommitInput, now: Date): AdmissionRecord {
  const at = now.toISOString();
  db.transaction(() => {
    db.prepare(
      `INSERT INTO operations (id, kind, status, app, ref, saga_id, payload_json, result_json, attempts, max_attempts, next_attempt_at, stage, created_at, updated_at, started_at, finished_at)
      VALUES (?, 'app.deploy', 'succeeded', ?, ?, ?, ?, ?, 1, 1, ?, 'external_admission', ?, ?, ?, ?)`,
    ).run(
      input.operationId,
      app,
      input.commit,
      input.sagaId,
      JSON.stringify(input.operationPayload),
      JSON.stringify({ admissionId: input.admissionId, image: input.image }),
      at,
      at,
      at,
      at,
      at,
    );
    db.prepare(
      "INSERT INTO operation_attempts (operation_id, attempt, owner, app, started_at, ended_at, outcome) VALUES (?, 1, 'external-admission', ?, ?, ?, 'succeeded')",
    ).run(input.operationId, app, at, at);
    db.prepare(
      `INSERT INTO deployments (id, saga_id, operation_id, app, kind, status, ref, commit_sha, release_json, trigger, message, created_at, started_at, finished_at)
      VALUES (?, ?, ?, ?, 'deploy', 'succeeded', ?, ?, NULL, 'external-admission', ?, ?, ?, ?)`,
    ).run(
      input.deploymentId,
      input.sagaId,
      input.operationId,
      app,
      input.commit,
      input.commit,
      input.message,
      at,
      at,
      at,
    );
    db.prepare(
      "INSERT INTO deployment_steps (deployment_id, seq, step, status, message, started_at, ended_at) VALUES (?, 1, 'external_admission', 'succeeded', ?, ?, ?)",
    ).run(input.deploymentId, input.message, at, at);
    const region = db.prepare(
      "INSERT INTO deployment_regions (deployment_id, region, status, updated_at) VALUES (?, ?, 'succeeded', ?)",
    );
    for (const r of input.regions) region.run(input.deploymentId, r, at);
    const changed = db
      .prepare(
        `UPDATE external_admissions SET state = 'committed', operation_id = ?, operation_digest = ?, deployment_id = ?, cleanup_intent_digest = ?, commit_pending = 1, updated_at = ?
      WHERE id = ? AND state = 'registered'`,
      )
      .run(
        input.operationId,
        input.operationDigest,
        input.deploymentId,
        input.cleanupIntentDigest,
        at,
        input.admissionId,
      ).changes;
    if (changed !== 1) throw new Error(`admission ${input.admissionId} is no longer registered`);
  })();
  return getAdmission(db, input.admissionId)!;
}

/** The evidence service acknowledged the commit. */
export function acknowledgeCommit(db: Db, id: string, revision: number, now: Date): AdmissionRecord {
  db.prepare(
    'UPDATE external_admissions SET commit_pending = 0, evidence_revision = ?, updated_at = ? WHERE id = ?',
  ).run(revision, now.toISOString(), id);
  return getAdmission(db, id)!;
}

/** The evidence service added the absence proof: cleanup_ready with one pending external_cleanup checkpoint. */
export function markCleanupReady(
  db: Db,
  id: string,
  absenceProofDigest: string,
  checkpoints: readonly CheckpointRef[],
  now: Date,
): AdmissionRecord {
  db.prepare(
    "UPDATE external_admissions SET state = 'cleanup_ready', absence_proof_digest = ?, checkpoints_json = ?, updated_at = ? WHERE id = ? AND state = 'committed' AND commit_pending = 0",
  ).run(absenceProofDigest, JSON.stringify(checkpoints), now.toISOString(), id);
  return getAdmission(db, id)!;
}

/** Writes the external_cleanup checkpoint and completes the admission, atomically (one statement). */
export function completeCleanup(db: Db, id: string, checkpoints: readonly CheckpointRef[], now: Date): AdmissionRecord {
  db.prepare(
    "UPDATE external_admissions SET state = 'complete', checkpoints_json = ?, updated_at = ? WHERE id = ? AND state = 'cleanup_ready'",
  ).run(JSON.stringify(checkpoints), now.toISOString(), id);
  return getAdmission(db, id)!;
}
