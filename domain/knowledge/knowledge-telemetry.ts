/**
 * What the knowledge services report to the store's metrics (the admin listener's `/metrics`):
 * admission rejections by reason and handoff webhook deliveries by result, each from a closed set
 * so every label stays low cardinality. A port: the Prometheus registry is wired in by `wiring/`.
 */

/** Why the write path refused to admit a node. */
export const AdmissionRejectionReason = {
  /** The source's credibility in the namespace is below the admission floor. */
  lowCredibility: 'low_credibility',
} as const;
export type AdmissionRejectionReason = (typeof AdmissionRejectionReason)[keyof typeof AdmissionRejectionReason];
export const ADMISSION_REJECTION_REASONS: readonly AdmissionRejectionReason[] = Object.values(AdmissionRejectionReason);

/** How one handoff webhook delivery attempt ended. */
export const WebhookDeliveryResult = {
  /** The target answered 2xx. */
  delivered: 'delivered',
  /** Not delivered; fewer attempts than the retry limit, so the pacing recommends another. */
  retrying: 'retrying',
  /** Not delivered, and the attempts reached the retry limit. */
  failed: 'failed',
} as const;
export type WebhookDeliveryResult = (typeof WebhookDeliveryResult)[keyof typeof WebhookDeliveryResult];
export const WEBHOOK_DELIVERY_RESULTS: readonly WebhookDeliveryResult[] = Object.values(WebhookDeliveryResult);

/** The result of attempt number `attempt` (1-based) that did or did not succeed, under a limit of `maxAttempts`. */
export function webhookDeliveryResult(success: boolean, attempt: number, maxAttempts: number): WebhookDeliveryResult {
  if (success) return 'delivered';
  return attempt < maxAttempts ? 'retrying' : 'failed';
}

/** Receives what the knowledge services count. */
export interface KnowledgeTelemetry {
  admissionRejected(reason: AdmissionRejectionReason): void;
  webhookDelivery(result: WebhookDeliveryResult): void;
}

/** Telemetry that records nothing (tools and tests that build services without metrics). */
export const NO_TELEMETRY: KnowledgeTelemetry = {
  admissionRejected: () => undefined,
  webhookDelivery: () => undefined,
};
