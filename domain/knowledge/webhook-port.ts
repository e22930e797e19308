/**
 * The port of the knowledge store's outbound webhooks (handoff webhooks, the review evaluator and
 * acquisition connectors): check a target URL, then POST JSON to the checked address. The adapter
 * (platform/outbound/webhook-client.ts) applies the one outbound guard; the signature and the
 * protocol headers are the knowledge store's own (docs/adr/0033-handoff-webhooks.md,
 * docs/adr/0136-knowledge-http-clients-behind-ports.md).
 */
import { createHash, createHmac } from 'node:crypto';

/** Header carrying `sha256=<hex HMAC-SHA-256 of the raw body>`. */
export const SIGNATURE_HEADER = 'x-svc-signature-256';
/** Header naming the event type of the payload. */
export const EVENT_HEADER = 'x-svc-event';
/** Header carrying the delivery id (the digest event id for handoffs). */
export const DELIVERY_HEADER = 'x-svc-delivery';
/** Header carrying the attempt number, starting at 1. */
export const ATTEMPT_HEADER = 'x-svc-attempt';

/** Most bytes of a response body kept (and returned). */
export const RESPONSE_BODY_LIMIT = 64 * 1024;

/** `sha256=<hex>` HMAC-SHA-256 of `body` with `secret`. */
export function signBody(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/** Hex SHA-256 of a text or bytes. */
export function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** A target URL whose address was checked. */
export interface CheckedTarget {
  readonly url: URL;
  readonly address: string;
  readonly family: 4 | 6;
}

/** What came back from one request. */
export interface SendOutcome {
  readonly statusCode: number | null;
  readonly success: boolean;
  readonly responseBody: string | null;
  readonly responseSha256: string | null;
  readonly error: string | null;
  readonly durationMs: number;
}

/** Outbound JSON webhooks through the outbound guard. */
export interface WebhookClient {
  /**
   * Parses and checks a target URL: http or https, no credentials, and every resolved address
   * allowed by the guard. Throws a ValidationError (`invalid_target_url`, `target_not_resolvable`
   * or `target_not_allowed`).
   */
  checkTarget(raw: string): Promise<CheckedTarget>;
  /** Posts `body` to a checked target, pinned to its checked address; 2xx is success, redirects are not followed. */
  postJson(
    target: CheckedTarget,
    body: string,
    headers: Record<string, string>,
    timeoutMs: number,
  ): Promise<SendOutcome>;
}
