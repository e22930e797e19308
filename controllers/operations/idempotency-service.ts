/**
 * Idempotency keys for versioned mutations: reserve a key for a request, replay the stored
 * response of the same request, refuse the key for a different one. Used by `api/http/idempotency.ts`.
 */
import { decideIdempotency, IDEMPOTENCY_KEY_TTL_MS, type IdempotencyDecision } from '../../domain/pipeline/index.js';
import type { Db } from '../../store/database.js';
import {
  completeIdempotencyKey,
  releaseIdempotencyKey,
  reserveIdempotencyKey,
} from '../../store/control/idempotency.js';

/** The outcome of beginning a keyed request. */
export type IdempotencyBegin = IdempotencyDecision & {
  readonly response?: { readonly status: number; readonly body: unknown };
};

/** The port the HTTP middleware uses. */
export interface IdempotencyKeys {
  begin(input: { key: string; requestHash: string; method: string; path: string }): IdempotencyBegin;
  complete(key: string, status: number, body: unknown): void;
  release(key: string): void;
}

/** Idempotency keys stored in control.db, kept `ttlMs` (at least 24 hours). */
export function sqliteIdempotencyKeys(db: Db, ttlMs = IDEMPOTENCY_KEY_TTL_MS): IdempotencyKeys {
  return {
    begin(input) {
      const reserved = reserveIdempotencyKey(db, { ...input, ttlMs: Math.max(ttlMs, IDEMPOTENCY_KEY_TTL_MS) });
      if (reserved.reserved) return { action: 'proceed' };
      const decision = decideIdempotency(reserved.existing, input.requestHash);
      return decision.action === 'replay'
        ? {
            ...decision,
            response: { status: reserved.existing.responseStatus ?? 200, body: reserved.existing.responseBody },
          }
        : decision;
    },
    complete: (key, status, body) => completeIdempotencyKey(db, key, status, body),
    release: (key) => releaseIdempotencyKey(db, key),
  };
}
