export { blockedAddressReason, checkTargetUrl, resolveTarget } from '../outbound/outbound-guard.js';
export type { OutboundPolicy } from '../outbound/outbound-guard.js';
export { postTo } from './outbound-request.js';
export type { DeliveryResult, PostOptions } from './outbound-request.js';
export { deliverToSink, signSinkPayload, sinkRequest } from './event-sink.js';
export type { SinkConfig } from './event-sink.js';
export { EMBED_COLORS, MOBILE_PRIORITY, TOPIC_PRIORITY, channelRequest } from './channel-payloads.js';
export { notifyChannel } from './notifier.js';
