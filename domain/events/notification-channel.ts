/**
 * Notification channels: where alerting events are delivered. Tokens and user keys are kept for
 * delivery and never leave the control plane: the API shows a {@link ChannelView}.
 */
import type { Severity } from './event-port.js';

/** Channel providers. */
export const ChannelProvider = {
  embedWebhook: 'embed_webhook',
  topicPush: 'topic_push',
  mobilePush: 'mobile_push',
  webhook: 'webhook',
} as const;
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

/** The secret-free view of a channel. */
export function channelView(c: ChannelRecord): ChannelView {
  return {
    id: c.id,
    provider: c.provider,
    name: c.name,
    url: c.url,
    severities: c.severities,
    hasToken: c.token !== null,
    hasUserKey: c.userKey !== null,
    createdAt: c.createdAt,
  };
}
