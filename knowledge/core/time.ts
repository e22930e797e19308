/**
 * ISO 8601 timestamps at the service boundary, epoch milliseconds inside.
 */
import { ValidationError } from '../../domain/errors.js';
import { OPEN_TIME } from '../../store/knowledge/rows.js';

/** Parses an ISO 8601 timestamp with a zone, or throws a ValidationError naming `field`. */
export function parseTime(field: string, value: string | undefined | null): number | undefined {
  if (value === undefined || value === null) return undefined;
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(value)
    ? Date.parse(value)
    : Number.NaN;
  if (!Number.isFinite(ms) || ms < 0 || ms >= OPEN_TIME) {
    throw new ValidationError(
      `${field}: "${String(value).slice(0, 64)}" is not an ISO 8601 timestamp with a time zone`,
      { code: 'invalid_request', details: { field } },
    );
  }
  return ms;
}

/** ISO 8601 UTC text of a time, or null for an open interval end. */
export function isoTime(ms: number): string | null {
  return ms >= OPEN_TIME ? null : new Date(ms).toISOString();
}
