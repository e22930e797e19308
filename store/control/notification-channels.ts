/**
 * Notification channel store. Tokens and user keys are stored for delivery and never leave the
 * store through {@link ChannelView}.
 */
import type { Db } from '../database.js';
import type { Severity } from '../../domain/events/event-port.js';

/** Channel providers. */
export const ChannelProvider = { embedWebhook: 'embed_webhook', topicPush: 'topic_push', mobilePush: 'mobile_push', webhook: 'webhook' } as const;
export type ChannelProvider = (typeof ChannelProvider)[keyof typeof ChannelProvider];

/** A channel with its secrets, for delivery only. */
export interface ChannelRecord {
  readonly id: string;
  readonly provider: ChannelProvider;
  readonly name: string;
  readonly url: string;
  /** Severities delivered; null means all. */
  readonly severities: readonly Severity[] | null;
  /** mobile_push app token, or webhook bearer token. */
  readonly token: string | null;
  /** mobile_push user key. */
  readonly userKey: string | null;
  readonly createdAt: string;
}

/** A channel as the API shows it: secrets replaced by whether they are set. */
export interface ChannelView {
  readonly id: string;
  readonly provider: ChannelProvider;
  readonly name: string;
  readonly url: string;
  readonly severities: readonly Severity[] | null;
  readonly hasToken: boolean;
  readonly hasUserKey: boolean;
  readonly createdAt: string;
}

interface Row { id: string; provider: ChannelProvider; name: string; url: string; severities_json: string | null; token: string | null; user_key: string | null; created_at: string }

const toRecord = (r: Row): ChannelRecord => ({
  id: r.id, provider: r.provider, name: r.name, url: r.url,
  severities: r.severities_json === null ? null : (JSON.parse(r.severities_json) as Severity[]),
  token: r.token, userKey: r.user_key, createdAt: r.created_at,
});

/** The secret-free view of a channel. */
export function channelView(c: ChannelRecord): ChannelView {
  return { id: c.id, provider: c.provider, name: c.name, url: c.url, severities: c.severities, hasToken: c.token !== null, hasUserKey: c.userKey !== null, createdAt: c.createdAt };
}

export function insertChannel(db: Db, c: ChannelRecord): void {
  db.prepare('INSERT INTO notification_channels (id, provider, name, url, severities_json, token, user_key, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
    .run(c.id, c.provider, c.name, c.url, c.severities === null ? null : JSON.stringify(c.severities), c.token, c.userKey, c.createdAt);
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
