/**
 * control.db migration 10: restricted (authority-only) mode. External admissions with their nonce
 * hashes (never a raw nonce), workload tokens exchanged from workflow identities (SHA-256 only),
 * the signed fleet audit chain, device enrollments, capacity plans and runner attempts.
 */
import type { Migration } from '../../migrate.js';

export const FLEET_AUTHORITY_MIGRATION: Migration = {
  version: 10,
  name: 'fleet-authority',
  sql: `
    CREATE TABLE external_admissions (
      id TEXT PRIMARY KEY,
      app TEXT NOT NULL,
      idempotency_key TEXT NOT NULL UNIQUE,
      request_digest TEXT NOT NULL,
      logical_json TEXT NOT NULL,
      repository TEXT NOT NULL,
      run_id TEXT NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('registered', 'committed', 'cleanup_ready', 'complete')),
      generation INTEGER NOT NULL,
      evidence_revision INTEGER NOT NULL,
      receipt_digest TEXT,
      proof_digests_json TEXT,
      snapshot_json TEXT,
      snapshot_digest TEXT,
      operation_id TEXT REFERENCES operations(id),
      operation_digest TEXT,
      deployment_id TEXT REFERENCES deployments(id),
      cleanup_intent_digest TEXT,
      absence_proof_digest TEXT,
      commit_pending INTEGER NOT NULL DEFAULT 0,
      retry_lineage_json TEXT NOT NULL DEFAULT '[]',
      checkpoints_json TEXT NOT NULL DEFAULT '[]',
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    );
    CREATE INDEX external_admissions_app ON external_admissions(app, created_at);

    CREATE TABLE external_admission_nonces (
      nonce_sha256 TEXT PRIMARY KEY,
      admission_id TEXT NOT NULL REFERENCES external_admissions(id),
      generation INTEGER NOT NULL,
      run_key TEXT NOT NULL,
      issued_at TEXT NOT NULL,
      expires_at TEXT NOT NULL,
      consumed_at TEXT,
      replaced_at TEXT,
      UNIQUE (admission_id, generation)
    );
    CREATE INDEX external_admission_nonces_run ON external_admission_nonces(run_key) WHERE consumed_at IS NULL AND replaced_at IS NULL;
    CREATE INDEX external_admission_nonces_expiry ON external_admission_nonces(expires_at);

    CREATE TABLE workload_tokens (
      id TEXT PRIMARY KEY,
      secret_sha256 TEXT NOT NULL UNIQUE,
      repository TEXT NOT NULL,
      repository_id TEXT NOT NULL,
      run_id TEXT NOT NULL,
      run_attempt TEXT NOT NULL,
      workflow_ref TEXT NOT NULL,
      ref TEXT NOT NULL,
      sha TEXT NOT NULL,
      issued_at TEXT NOT NULL,
      expires_at TEXT NOT NULL
    );
    CREATE INDEX workload_tokens_expiry ON workload_tokens(expires_at);

    CREATE TABLE fleet_audit (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      at TEXT NOT NULL,
      actor TEXT NOT NULL,
      action TEXT NOT NULL,
      subject TEXT NOT NULL,
      details_json TEXT NOT NULL,
      prev_sha256 TEXT NOT NULL,
      entry_sha256 TEXT NOT NULL,
      signature TEXT NOT NULL
    );
    CREATE INDEX fleet_audit_at ON fleet_audit(at);

    CREATE TABLE device_enrollments (
      id TEXT PRIMARY KEY,
      name TEXT NOT NULL,
      public_key_sha256 TEXT NOT NULL UNIQUE,
      requested_by TEXT NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'rejected')),
      requested_at TEXT NOT NULL,
      decided_at TEXT,
      decided_by TEXT
    );

    CREATE TABLE fleet_plans (
      id TEXT PRIMARY KEY,
      namespace TEXT NOT NULL,
      node_pool TEXT NOT NULL,
      plan_json TEXT NOT NULL,
      plan_sha256 TEXT NOT NULL,
      pull_request_json TEXT,
      created_at TEXT NOT NULL,
      created_by TEXT NOT NULL
    );

    CREATE TABLE fleet_attempts (
      id TEXT PRIMARY KEY,
      plan_id TEXT NOT NULL REFERENCES fleet_plans(id),
      runner TEXT NOT NULL,
      dispatched_at TEXT NOT NULL,
      expires_at TEXT NOT NULL,
      finished_at TEXT,
      outcome TEXT
    );
    CREATE INDEX fleet_attempts_plan ON fleet_attempts(plan_id, dispatched_at);
  `,
};
