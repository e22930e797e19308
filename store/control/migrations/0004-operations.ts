/**
 * control.db migration 4: durable operations and their attempts, idempotency keys, deployments
 * (sagas) with their steps and regions, and the webhook inbox.
 */
import type { Migration } from '../../migrate.js';

export const OPERATIONS_MIGRATION: Migration = {
  version: 4,
  name: 'operations-and-deployments',
  sql: `
    CREATE TABLE operations (
      id TEXT PRIMARY KEY,
      kind TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
      app TEXT,
      ref TEXT,
      saga_id TEXT,
      payload_json TEXT NOT NULL DEFAULT '{}',
      result_json TEXT,
      attempts INTEGER NOT NULL DEFAULT 0,
      max_attempts INTEGER NOT NULL DEFAULT 3,
      lock_owner TEXT,
      lock_expires_at TEXT,
      next_attempt_at TEXT NOT NULL,
      last_error TEXT,
      stage TEXT,
      mutated INTEGER NOT NULL DEFAULT 0,
      depends_on TEXT REFERENCES operations(id),
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      started_at TEXT,
      finished_at TEXT
    );
    CREATE INDEX operations_claimable ON operations(status, next_attempt_at);
    CREATE INDEX operations_app ON operations(app, created_at);
    CREATE INDEX operations_saga ON operations(saga_id);
    -- The per-app lock: at most one running operation per app, enforced by the database itself.
    CREATE UNIQUE INDEX operations_one_running_per_app ON operations(app) WHERE status = 'running' AND app IS NOT NULL;

    CREATE TABLE operation_attempts (
      operation_id TEXT NOT NULL REFERENCES operations(id),
      attempt INTEGER NOT NULL,
      owner TEXT NOT NULL,
      app TEXT,
      started_at TEXT NOT NULL,
      ended_at TEXT,
      outcome TEXT,
      PRIMARY KEY (operation_id, attempt)
    );

    CREATE TABLE idempotency_keys (
      key TEXT PRIMARY KEY,
      request_hash TEXT NOT NULL,
      method TEXT NOT NULL,
      path TEXT NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('in_flight', 'done')),
      response_status INTEGER,
      response_json TEXT,
      created_at TEXT NOT NULL,
      expires_at TEXT NOT NULL
    );
    CREATE INDEX idempotency_keys_expiry ON idempotency_keys(expires_at);

    CREATE TABLE deployments (
      id TEXT PRIMARY KEY,
      saga_id TEXT NOT NULL UNIQUE,
      operation_id TEXT REFERENCES operations(id),
      app TEXT NOT NULL,
      kind TEXT NOT NULL,
      status TEXT NOT NULL,
      ref TEXT,
      commit_sha TEXT,
      release_json TEXT,
      previous_deployment_id TEXT,
      failed_step TEXT,
      message TEXT,
      trigger TEXT NOT NULL,
      created_at TEXT NOT NULL,
      started_at TEXT,
      finished_at TEXT
    );
    CREATE INDEX deployments_app ON deployments(app, created_at);

    CREATE TABLE deployment_steps (
      deployment_id TEXT NOT NULL REFERENCES deployments(id),
      seq INTEGER NOT NULL,
      step TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'skipped')),
      message TEXT,
      output TEXT,
      started_at TEXT NOT NULL,
      ended_at TEXT,
      PRIMARY KEY (deployment_id, seq)
    );

    CREATE TABLE deployment_regions (
      deployment_id TEXT NOT NULL REFERENCES deployments(id),
      region TEXT NOT NULL,
      status TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      PRIMARY KEY (deployment_id, region)
    );

    CREATE TABLE webhook_deliveries (
      id TEXT PRIMARY KEY,
      provider TEXT NOT NULL,
      event TEXT,
      delivery_id TEXT,
      repository TEXT,
      ref TEXT,
      branch TEXT,
      commit_sha TEXT,
      matched_app TEXT,
      saga_id TEXT,
      operation_id TEXT,
      status TEXT NOT NULL,
      reason TEXT,
      payload_json TEXT,
      metadata_json TEXT NOT NULL DEFAULT '{}',
      received_at TEXT NOT NULL,
      decided_at TEXT
    );
    CREATE INDEX webhook_deliveries_delivery ON webhook_deliveries(provider, delivery_id);
  `,
};
