/**
 * Workload tokens in control.db: the `fleet:external-admission` tokens exchanged from workflow
 * identities, bound to the run they were issued to. Only the SHA-256 of each secret is kept.
 */
import type { Db } from '../database.js';

/** A stored workload token (never the secret). */
export interface WorkloadTokenRecord {
  readonly id: string;
  readonly repository: string;
  readonly repositoryId: string;
  readonly runId: string;
  readonly runAttempt: string;
  readonly workflowRef: string;
  readonly ref: string;
  readonly sha: string;
  readonly issuedAt: string;
  readonly expiresAt: string;
}

export function insertWorkloadToken(db: Db, record: WorkloadTokenRecord, secretSha256: string): void {
  db.prepare(
    'INSERT INTO workload_tokens (id, secret_sha256, repository, repository_id, run_id, run_attempt, workflow_ref, ref, sha, issued_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  ).run(
    record.id,
    secretSha256,
    record.repository,
    record.repositoryId,
    record.runId,
    record.runAttempt,
    record.workflowRef,
    record.ref,
    record.sha,
    record.issuedAt,
    record.expiresAt,
  );
}

/** The unexpired token whose secret has this SHA-256. */
export function workloadTokenBySecret(db: Db, secretSha256: string, now: Date): WorkloadTokenRecord | undefined {
  const row = db
    .prepare('SELECT * FROM workload_tokens WHERE secret_sha256 = ? AND expires_at > ?')
    .get(secretSha256, now.toISOString()) as Record<string, string> | undefined;
  return (
    row && {
      id: row.id!,
      repository: row.repository!,
      repositoryId: row.repository_id!,
      runId: row.run_id!,
      runAttempt: row.run_attempt!,
      workflowRef: row.workflow_ref!,
      ref: row.ref!,
      sha: row.sha!,
      issuedAt: row.issued_at!,
      expiresAt: row.expires_at!,
    }
  );
}

/** Removes at most `limit` expired tokens. */
export function deleteExpiredWorkloadTokens(db: Db, now: Date, limit: number): number {
  return db
    .prepare(
      'DELETE FROM workload_tokens WHERE rowid IN (SELECT rowid FROM workload_tokens WHERE expires_at <= ? LIMIT ?)',
    )
    .run(now.toISOString(), limit).changes;
}
