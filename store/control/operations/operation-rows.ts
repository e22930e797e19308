/**
 * Operation rows of control.db as read: the raw row and the domain operation it becomes.
 */
import type { Operation, OperationKind, OperationStatus } from '../../../domain/operations/index.js';
import type { Db } from '../../database.js';

/** An `operations` row as SQLite answers it. */
export interface RawOperation {
  id: string;
  kind: string;
  status: string;
  app: string | null;
  ref: string | null;
  saga_id: string | null;
  payload_json: string;
  result_json: string | null;
  attempts: number;
  max_attempts: number;
  lock_owner: string | null;
  lock_expires_at: string | null;
  next_attempt_at: string;
  last_error: string | null;
  stage: string | null;
  mutated: number;
  depends_on: string | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
}

/** The domain operation of a row. */
export function fromRaw(raw: RawOperation): Operation {
  return {
    id: raw.id,
    kind: raw.kind as OperationKind,
    status: raw.status as OperationStatus,
    app: raw.app,
    ref: raw.ref,
    sagaId: raw.saga_id,
    payload: JSON.parse(raw.payload_json) as Record<string, unknown>,
    result: raw.result_json === null ? null : (JSON.parse(raw.result_json) as Record<string, unknown>),
    attempts: raw.attempts,
    maxAttempts: raw.max_attempts,
    lockOwner: raw.lock_owner,
    lockExpiresAt: raw.lock_expires_at,
    nextAttemptAt: raw.next_attempt_at,
    lastError: raw.last_error,
    stage: raw.stage,
    mutated: raw.mutated === 1,
    dependsOn: raw.depends_on,
    createdAt: raw.created_at,
    updatedAt: raw.updated_at,
    startedAt: raw.started_at,
    finishedAt: raw.finished_at,
  };
}

/** One operation, or undefined. */
export function getOperation(db: Db, id: string): Operation | undefined {
  const raw = db.prepare('SELECT * FROM operations WHERE id = ?').get(id) as RawOperation | undefined;
  return raw && fromRaw(raw);
}
