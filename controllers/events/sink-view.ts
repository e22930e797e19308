/**
 * The configured event sink as `/api/events/sinks` shows it: where it sends (without credentials
 * or query), whether it signs, and its delivery counts. Never the secret.
 */
import type { SinkConfig } from '../../platform/notifications/event-sink.js';
import type { Db } from '../../store/database.js';
import { SINK_TARGET, deliveryStats } from '../../store/control/event-outbox.js';

/** One configured sink with its delivery counts. */
export interface SinkView {
  readonly name: string;
  readonly url: string;
  readonly keyId: string | null;
  readonly signed: boolean;
  readonly environment: string;
  readonly source: string;
  readonly pending: number;
  readonly delivered: number;
  readonly failed: number;
  readonly lastError: string | null;
}

/** The sink's URL with user, password and query removed. */
function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    u.search = '';
    return u.toString();
  } catch {
    return url; // the configuration validated it already
  }
}

/** The configured sinks (none or one) with delivery counts from the outbox. */
export function sinkViews(db: Db, sink: SinkConfig | undefined, environment: string, source: string): SinkView[] {
  if (!sink) return [];
  const stats = deliveryStats(db).find((s) => s.target === SINK_TARGET);
  return [
    {
      name: 'sink',
      url: shownUrl(sink.url),
      keyId: sink.keyId ?? null,
      signed: sink.secret !== undefined,
      environment,
      source,
      pending: stats?.pending ?? 0,
      delivered: stats?.delivered ?? 0,
      failed: stats?.failed ?? 0,
      lastError: stats?.lastError ?? null,
    },
  ];
}
