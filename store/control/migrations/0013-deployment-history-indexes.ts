/**
 * control.db migration 13: indexes for the deploy metrics, which read the deployments that started
 * or finished since a cursor at each scrape instead of the whole history
 * (docs/adr/0112-deploy-counters-from-durable-records.md).
 */
import type { Migration } from '../../migrate.js';

export const DEPLOYMENT_HISTORY_INDEXES_MIGRATION: Migration = {
  version: 13,
  name: 'deployment-history-indexes',
  sql: `
    CREATE INDEX deployments_finished ON deployments(finished_at) WHERE finished_at IS NOT NULL;
    CREATE INDEX deployments_started ON deployments(started_at) WHERE started_at IS NOT NULL;
  `,
};
