/**
 * Parsing of log read parameters (`since`, `until`, `limit`, `stream`, ...) from their text form,
 * shared by the HTTP edge and the CLI: times are ISO 8601 or a `10m`-style duration before now.
 */
import { ValidationError } from '../errors.js';
import { LOG_STREAMS, type LogStream } from './log-line.js';

/** Most lines one read returns. */
export const MAX_LOG_LIMIT = 10_000;
/** Lines a read returns when no limit is given. */
export const DEFAULT_LOG_LIMIT = 200;
/** Longest `grep` text. */
export const MAX_GREP_CHARS = 200;

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

function invalid(field: string, message: string): ValidationError {
  return new ValidationError(`${field}: ${message}`, { code: 'invalid_request', details: { field } });
}

/** A point in time from `10m`-style durations (before `now`) or an ISO 8601 time; Unix milliseconds. */
export function parseLogTime(field: string, raw: string, now: number): number {
  const duration = /^(\d{1,9})(ms|s|m|h|d)$/.exec(raw);
  if (duration) return now - Number(duration[1]) * UNIT_MS[duration[2]!]!;
  if (/^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(raw)) {
    const at = Date.parse(raw);
    if (!Number.isNaN(at)) return at;
  }
  throw invalid(field, `"${raw}" is neither a duration like 10m, 2h, 7d nor an ISO 8601 time`);
}

/** The `limit` of a read. */
export function parseLogLimit(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_LOG_LIMIT;
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_LOG_LIMIT)
    throw invalid('limit', `"${raw}" is not a whole number from 1 to ${MAX_LOG_LIMIT}`);
  return Number(raw);
}

/** The `stream` of a read. */
export function parseLogStream(raw: string | undefined): LogStream | undefined {
  if (raw === undefined) return undefined;
  if (!(LOG_STREAMS as readonly string[]).includes(raw))
    throw invalid('stream', `"${raw}" is not one of ${LOG_STREAMS.join(', ')}`);
  return raw as LogStream;
}

/** The `grep` text of a read. */
export function parseLogGrep(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (raw.length > MAX_GREP_CHARS) throw invalid('grep', `is longer than ${MAX_GREP_CHARS} characters`);
  if (raw.trim() === '') throw invalid('grep', 'is blank');
  return raw;
}

/** A name filter (`process`, `allocation`, `release`): printable, no spaces, at most 128 characters. */
export function parseLogName(field: string, raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (!/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/.test(raw))
    throw invalid(field, `"${raw.slice(0, 140)}" is not a ${field} name (letters, digits, . _ : -)`);
  return raw;
}

/** `follow`: true or false. */
export function parseLogFollow(raw: string | undefined): boolean {
  if (raw === undefined || raw === 'false' || raw === '0') return false;
  if (raw === 'true' || raw === '1') return true;
  throw invalid('follow', `"${raw}" is not true or false`);
}
