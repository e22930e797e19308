/**
 * control.db migration 5: endpoint toggles (hostnames switched off by an operator) and access
 * aggregates (per hostname, hour, source and status bucket; counts only).
 */
import type { Migration } from '../../migrate.js';

export const ROUTING_MIGRATION: Migration = {
  version: 5,
  name: 'routing-and-access',
  sql: `
    CREATE TABLE endpoint_toggles (
      hostname TEXT PRIMARY KEY,
      app TEXT NOT NULL,
      enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
      updated_at TEXT NOT NULL
    );
    CREATE INDEX endpoint_toggles_app ON endpoint_toggles(app);

    CREATE TABLE access_buckets (
      hostname TEXT NOT NULL,
      hour TEXT NOT NULL,
      source TEXT NOT NULL CHECK (source IN ('gateway', 'logpush', 'edge-graphql')),
      status_bucket TEXT NOT NULL,
      count INTEGER NOT NULL CHECK (count >= 0),
      updated_at TEXT NOT NULL,
      PRIMARY KEY (hostname, hour, source, status_bucket)
    );
    CREATE INDEX access_buckets_hour ON access_buckets(hour);
  `,
};
