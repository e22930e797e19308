/**
 * Notification channel store: the rows of domain/events/notification-channel.ts's ChannelRecord.
 */
import type { Db } from '../database.js';
import type { Severity } from '../../domain/events/event-port.js';
import type { ChannelProvider, ChannelRecord } from '../../domain/events/notification-channel.js';

interface Row {
  id: string;
  provider: ChannelProvider;
  name: string;
  url: string;
  severities_json: string | null;
  token: string | null;
  user_key: string | null;
  created_at: string;
}

const toRecord = (r: Row): ChannelRecord => ({
  id: r.id,
  provider: r.provider,
  name: r.name,
  url: r.url,
  severities: r.severities_json === null ? null : (JSON.parse(r.severities_json) as Severity[]),
  token: r.token,
  userKey: r.user_key,
  createdAt: r.created_at,
});

export function insertChannel(db: Db, c: ChannelRecord): void {
  db.prepare(
    'INSERT INTO notification_channels (id, provider, name, url, severities_json, token, user_key, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  ).run(
    c.id,
    c.provider,
    c.name,
    c.url,
    c.severities === null ? null : JSON.stringify(c.severities),
    c.token,
    c.userKey,
    c.createdAt,
  );
}

export function listChannels(db: Db): ChannelRecord[] {
  return (db.prepare('SELECT * FROM notification_channels ORDER BY created_at, id').all() as Row[]).map(toRecord);
}

export function getChannel(db: Db, id: string): ChannelRecord | undefined {
  const row = db.prepare('SELECT * FROM notification_channels WHERE id = ?').get(id) as Row | undefined;
  return row ? toRecord(row) : undefined;
}

/** Removes a channel; false when it did not exist. */
export function deleteChannel(db: Db, id: string): boolean {
  return db.prepare('DELETE FROM notification_channels WHERE id = ?').run(id).changes > 0;
}
