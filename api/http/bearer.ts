/**
 * Bearer token extraction and constant-time comparison, shared by both services' auth.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(ctx: Context): string | undefined {
  return bearerOfHeader(ctx.get('authorization'));
}

/** The token of an `Authorization` header's value (`''` when absent), or undefined. */
export function bearerOfHeader(header: string): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/** SHA-256 of a secret, hex; what we keep in memory instead of the secret. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Compares two secrets without leaking where they differ (hashes first, so lengths never leak). */
export function secretEquals(given: string, expectedSha256Hex: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = Buffer.from(expectedSha256Hex, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
