/**
 * Idempotency keys: a request is identified by its method, path and canonical body; the same key
 * with the same request replays the first response, with another request it is refused.
 */
import { canonicalDigest } from '../canonical-json.js';

/** How long a key is kept at least (24 hours). */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;

/** Accepted keys: 1-255 printable ASCII characters. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** The digest that identifies a request for idempotency: method, path and canonical JSON body. */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return canonicalDigest({ method: method.toUpperCase(), path, body: body ?? null });
}

/** What to do with a request carrying a key, given what is stored for the key. */
export type IdempotencyDecision =
  | { readonly action: 'proceed' }
  | { readonly action: 'replay' }
  | { readonly action: 'in_flight' }
  | { readonly action: 'reused' };

/** Decides from the stored row (or none) for the key. */
export function decideIdempotency(
  stored: { readonly requestHash: string; readonly state: 'in_flight' | 'done' } | undefined,
  requestHash: string,
): IdempotencyDecision {
  if (!stored) return { action: 'proceed' };
  if (stored.requestHash !== requestHash) return { action: 'reused' };
  return stored.state === 'done' ? { action: 'replay' } : { action: 'in_flight' };
}
