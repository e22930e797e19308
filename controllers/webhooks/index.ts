/**
 * Git-host push webhooks: the receiver and payload reading.
 */
export { WebhookProvider, WebhookReceiver, verifySignature } from './webhook-receiver.js';
export type { WebhookReceiverOptions, WebhookRequest } from './webhook-receiver.js';
export { normalizeRepository, pushFacts, repositoryMatches } from './push-payload.js';
export type { PushFacts } from './push-payload.js';
