/**
 * Schema of `logs.db`, the app log store (its own file beside control.db: docs/adr/0165).
 */
import type { Migration } from '../migrate.js';

export const LOG_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'log-lines',
    sql: `
CREATE TABLE log_lines (
  id INTEGER PRIMARY KEY,
  at INTEGER NOT NULL,
  app TEXT NOT NULL,
  process TEXT NOT NULL,
  allocation TEXT NOT NULL,
  release TEXT NOT NULL,
  stream TEXT NOT NULL,
  line TEXT NOT NULL
);
CREATE INDEX log_lines_app_id ON log_lines (app, id);
-- Word index of the text; the rows live in log_lines (contentless, deletable by rowid).
-- Filled behind capture by bounded indexing steps up to log_index.upto (see LogStore.indexStep).
CREATE VIRTUAL TABLE log_text USING fts5 (line, content = '', contentless_delete = 1);
CREATE TABLE log_index (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  upto INTEGER NOT NULL
);
INSERT INTO log_index (id, upto) VALUES (1, 0);
-- Bytes and lines kept per app, kept in step with log_lines, so the size bound needs no scan.
CREATE TABLE log_usage (
  app TEXT PRIMARY KEY,
  bytes INTEGER NOT NULL,
  lines INTEGER NOT NULL
);
-- How far capture has read each stream of each allocation, committed with the lines it read.
CREATE TABLE log_offsets (
  allocation TEXT NOT NULL,
  stream TEXT NOT NULL,
  offset INTEGER NOT NULL,
  PRIMARY KEY (allocation, stream)
) WITHOUT ROWID;
`,
  },
];
