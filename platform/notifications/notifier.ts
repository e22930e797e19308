/**
 * Notifier: delivers one event to one channel through the outbound guard.
 */
import type { EventRecord } from '../../domain/events/event-record.js';
import type { ChannelRecord } from '../../domain/events/index.js';
import { channelRequest } from './channel-payloads.js';
import { OutboundRefused } from '../errors.js';
import type { OutboundPolicy } from '../outbound/outbound-guard.js';
import { postTo, type DeliveryResult } from './outbound-request.js';

/** Sends `event` to `channel`; never throws, never reports secret values. */
export async function notifyChannel(
  channel: ChannelRecord,
  event: EventRecord,
  policy: OutboundPolicy,
  timeoutMs = 10_000,
): Promise<DeliveryResult> {
  const { headers, body } = channelRequest(channel, event);
  try {
    return await postTo(new URL(channel.url), { headers, body, timeoutMs }, policy);
  } catch (error) {
    const message = error instanceof OutboundRefused ? `refused: ${error.message}` : (error as Error).message;
    return { ok: false, status: 0, error: message };
  }
}
