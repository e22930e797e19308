/**
 * The wake gateway's readiness wait: default 30 s, overridable per request with `wakeTimeout` up to 2 m.
 */
import { ValidationError } from '../errors.js';
import { tryParseGoDuration } from '../spec/index.js';

/** Default readiness wait of a wake, in milliseconds. */
export const DEFAULT_WAKE_TIMEOUT_MS = 30_000;
/** Largest `wakeTimeout` a request may ask for, in milliseconds. */
export const MAX_WAKE_TIMEOUT_MS = 120_000;

/**
 * The wait for one request: the default, or the `wakeTimeout` query value (a duration such as `60s`).
 * @throws ValidationError when the value is not a positive duration of at most 2m.
 */
export function wakeTimeoutMs(raw: string | undefined, fallbackMs = DEFAULT_WAKE_TIMEOUT_MS): number {
  if (raw === undefined) return fallbackMs;
  const parsed = tryParseGoDuration(raw);
  if (!parsed.ok)
    throw new ValidationError(`wakeTimeout: "${raw}" is not a duration such as 60s`, {
      code: 'invalid_wake_timeout',
      details: { wakeTimeout: raw },
    });
  const ms = parsed.value.milliseconds;
  if (ms <= 0 || ms > MAX_WAKE_TIMEOUT_MS) {
    throw new ValidationError(`wakeTimeout: "${raw}" must be more than 0 and at most 2m`, {
      code: 'invalid_wake_timeout',
      details: { wakeTimeout: raw, maxMs: MAX_WAKE_TIMEOUT_MS },
    });
  }
  return ms;
}
