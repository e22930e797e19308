/**
 * Canonical JSON: sorted keys, compact UTF-8. Used for generations (hash of a canonical spec) and
 * digests, so the same value always hashes the same.
 */
import { createHash } from 'node:crypto';

/** Serializes `value` with object keys sorted at every depth; `undefined` members are dropped. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const member = (value as Record<string, unknown>)[key];
      if (member !== undefined) out[key] = sortKeys(member);
    }
    return out;
  }
  return typeof value === 'bigint' ? value.toString() : value;
}

/** SHA-256 hex of the canonical JSON of `value`. */
export function canonicalDigest(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}
