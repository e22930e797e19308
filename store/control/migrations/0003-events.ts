/**
 * control.db migration 3: the event surface (events, dedupe window, incident groups, delivery
 * outbox, notification channels). See docs/adr/0070-event-store-and-ingest.md.
 */
import type { Migration } from '../../migrate.js';

export const EVENTS_MIGRATION: Migration = {
  version: 3,
  name: 'event-surface',
  sql: `
    CREATE TABLE events (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      id TEXT NOT NULL UNIQUE,
      source TEXT NOT NULL,
      app TEXT NOT NULL DEFAULT '',
      environment TEXT NOT NULL,
      type TEXT NOT NULL,
      severity TEXT NOT NULL CHECK (severity IN ('info', 'warning', 'critical')),
      state TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'acknowledged', 'snoozed')),
      title TEXT NOT NULL,
      body TEXT NOT NULL DEFAULT '',
      dedupe_key TEXT,
      occurred_at TEXT NOT NULL,
      metadata_json TEXT NOT NULL DEFAULT '{}',
      correlation_key TEXT NOT NULL,
      snoozed_until_ms INTEGER,
      acknowledged_by TEXT,
      acknowledged_at TEXT,
      acknowledgement_note TEXT,
      resolved_by_event_id TEXT,
      recorded_at TEXT NOT NULL
    );
    CREATE INDEX events_app_seq ON events (app, seq);
    CREATE INDEX events_type_seq ON events (type, seq);
    CREATE INDEX events_severity_seq ON events (severity, seq);
    CREATE INDEX events_correlation_seq ON events (correlation_key, seq);
    CREATE INDEX events_dedupe_key ON events (dedupe_key) WHERE dedupe_key IS NOT NULL;
    CREATE INDEX events_group_unacked ON events (source, app, environment, correlation_key, seq)
      WHERE severity IN ('warning', 'critical') AND state <> 'acknowledged';
    CREATE INDEX events_snoozed_until ON events (snoozed_until_ms) WHERE state = 'snoozed';

    CREATE TABLE event_dedupe (
      dedupe_key TEXT PRIMARY KEY,
      event_id TEXT NOT NULL,
      seen_ms INTEGER NOT NULL
    );

    CREATE TABLE incident_groups (
      source TEXT NOT NULL,
      app TEXT NOT NULL,
      environment TEXT NOT NULL,
      correlation_key TEXT NOT NULL,
      event_count INTEGER NOT NULL,
      unacknowledged_count INTEGER NOT NULL,
      first_seen TEXT NOT NULL,
      last_seen TEXT NOT NULL,
      PRIMARY KEY (source, app, environment, correlation_key)
    );
    CREATE INDEX incident_groups_unacknowledged ON incident_groups (last_seen) WHERE unacknowledged_count > 0;

    CREATE TABLE notification_channels (
      id TEXT PRIMARY KEY,
      provider TEXT NOT NULL,
      name TEXT NOT NULL,
      url TEXT NOT NULL,
      severities_json TEXT,
      token TEXT,
      user_key TEXT,
      created_at TEXT NOT NULL
    );

    CREATE TABLE event_outbox (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      event_id TEXT NOT NULL,
      target TEXT NOT NULL,
      attempts INTEGER NOT NULL DEFAULT 0,
      next_attempt_ms INTEGER NOT NULL,
      last_error TEXT,
      status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
      delivered_at TEXT
    );
    CREATE INDEX event_outbox_due ON event_outbox (next_attempt_ms) WHERE status = 'pending';
  `,
};
