/**
 * Signed event sink: POSTs each event as JSON with `X-Event-Source`, `X-Sink-Key-Id`,
 * `X-Sink-Timestamp` and `X-Sink-Signature` (hex HMAC-SHA-256 of timestamp, newline, raw body).
 */
import { createHmac } from 'node:crypto';
import type { EventRecord } from '../../domain/events/event-record.js';
import { postTo, type DeliveryResult } from './outbound-request.js';

/** Sink configuration from the runtime environment. */
export interface SinkConfig {
  readonly url: string;
  readonly keyId: string | undefined;
  readonly secret: string | undefined;
  /** The X-Event-Source header. */
  readonly source: string;
}

/** The hex HMAC-SHA-256 signature of `timestamp + "\n" + body`. */
export function signSinkPayload(secret: string, timestamp: string, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}\n${body}`).digest('hex');
}

/** The headers and body of one sink delivery. */
export function sinkRequest(
  config: SinkConfig,
  event: EventRecord,
  timestamp: string,
): { headers: Record<string, string>; body: string } {
  const body = JSON.stringify(event);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-event-source': config.source,
    'x-sink-timestamp': timestamp,
  };
  if (config.keyId !== undefined) headers['x-sink-key-id'] = config.keyId;
  if (config.secret !== undefined) headers['x-sink-signature'] = signSinkPayload(config.secret, timestamp, body);
  return { headers, body };
}

/** Delivers one event to the sink. */
export async function deliverToSink(config: SinkConfig, event: EventRecord, now: Date): Promise<DeliveryResult> {
  const { headers, body } = sinkRequest(config, event, now.toISOString());
  return postTo(new URL(config.url), { headers, body });
}
