/**
 * Notification payloads per provider: what each channel kind receives for one event.
 */
import type { EventRecord } from '../../domain/events/event-record.js';
import type { Severity } from '../../domain/events/event-port.js';
import type { ChannelRecord } from '../../domain/events/index.js';

/** Embed colors per severity (decimal RGB): blue, amber, red. */
export const EMBED_COLORS: Record<Severity, number> = { info: 0x3498db, warning: 0xf1c40f, critical: 0xe74c3c };
/** topic_push priorities (1-5). */
export const TOPIC_PRIORITY: Record<Severity, string> = { info: '3', warning: '4', critical: '5' };
/** mobile_push priorities (-2..2; 2 needs retry and expire). */
export const MOBILE_PRIORITY: Record<Severity, string> = { info: '0', warning: '1', critical: '2' };

/** One outbound request for a channel. */
export interface ChannelRequest {
  readonly headers: Record<string, string>;
  readonly body: string;
}

const headline = (e: EventRecord): string => `[${e.severity.toUpperCase()}] ${e.title}`;

/** The request a channel receives for `event`. */
export function channelRequest(channel: ChannelRecord, event: EventRecord): ChannelRequest {
  switch (channel.provider) {
    case 'embed_webhook':
      return {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          embeds: [
            {
              title: headline(event).slice(0, 256),
              description: event.body.slice(0, 4000),
              color: EMBED_COLORS[event.severity],
              timestamp: event.occurredAt,
              fields: [
                { name: 'type', value: event.type, inline: true },
                { name: 'app', value: event.app || '-', inline: true },
                { name: 'environment', value: event.environment, inline: true },
                { name: 'correlation', value: event.correlationKey, inline: false },
              ],
              footer: { text: event.id },
            },
          ],
        }),
      };
    case 'topic_push':
      return {
        headers: {
          'content-type': 'text/plain; charset=utf-8',
          title: headline(event)
            .replace(/[^\x20-\x7e]/g, '?')
            .slice(0, 200),
          priority: TOPIC_PRIORITY[event.severity],
          tags: [event.severity, event.type].join(','),
          'x-correlation-key': event.correlationKey.replace(/[^\x20-\x7e]/g, '?'),
        },
        body: event.body || event.title,
      };
    case 'mobile_push': {
      const form = new URLSearchParams({
        token: channel.token ?? '',
        user: channel.userKey ?? '',
        title: headline(event).slice(0, 250),
        message: (event.body || event.title).slice(0, 1024),
        priority: MOBILE_PRIORITY[event.severity],
        timestamp: String(Math.floor(Date.parse(event.occurredAt) / 1000)),
      });
      if (event.severity === 'critical') {
        form.set('retry', '60');
        form.set('expire', '3600');
      }
      return { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() };
    }
    case 'webhook': {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (channel.token !== null) headers.authorization = `Bearer ${channel.token}`;
      return { headers, body: JSON.stringify({ event }) };
    }
  }
}
