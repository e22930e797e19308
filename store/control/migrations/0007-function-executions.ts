/**
 * control.db migration 7: function execution records (on-demand invocations of function processes),
 * kept here because the scheduler forgets an execution when its job is purged or trimmed.
 */
import type { Migration } from '../../migrate.js';

export const FUNCTION_EXECUTIONS_MIGRATION: Migration = {
  version: 7,
  name: 'function-executions',
  sql: `
    CREATE TABLE function_executions (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      execution_id TEXT NOT NULL UNIQUE,
      app TEXT NOT NULL,
      process TEXT NOT NULL,
      job_id TEXT NOT NULL,
      region TEXT NOT NULL,
      allocation_id TEXT,
      status TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'timed_out')),
      exit_code INTEGER,
      output TEXT NOT NULL DEFAULT '',
      error_output TEXT NOT NULL DEFAULT '',
      output_truncated INTEGER NOT NULL DEFAULT 0 CHECK (output_truncated IN (0, 1)),
      duration_ms INTEGER,
      started_at TEXT NOT NULL,
      finished_at TEXT
    );
    CREATE INDEX function_executions_app ON function_executions(app, seq);
    CREATE INDEX function_executions_running ON function_executions(app) WHERE status = 'running';
  `,
};
