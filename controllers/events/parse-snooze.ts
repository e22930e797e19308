/**
 * Snooze arguments: a duration (`90s`, `30m`, `2h`, `1d`, or milliseconds as a number) or an
 * ISO 8601 `until`, turned into the instant the snooze ends.
 */
import { ValidationError } from '../../domain/errors.js';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses a snooze duration; throws `ValidationError` naming the field. */
export function parseDurationMs(value: string | number, field = 'duration'): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value <= 0)
      throw new ValidationError(`${field}: must be a positive number of milliseconds`, {
        code: 'invalid_request',
        details: { field },
      });
    return value;
  }
  const parts = [...value.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== value) {
    throw new ValidationError(`${field}: "${value}" is not a duration such as 30m, 2h or 1h30m`, {
      code: 'invalid_request',
      details: { field },
    });
  }
  const ms = parts.reduce((sum, p) => sum + Number(p[1]) * (UNIT_MS[p[2]!] ?? 0), 0);
  if (ms <= 0)
    throw new ValidationError(`${field}: must be longer than zero`, { code: 'invalid_request', details: { field } });
  return ms;
}

/** The end of a snooze given `until` or `duration` (exactly one). */
export function snoozeUntilMs(args: { until?: string; duration?: string | number }, nowMs: number): number {
  if ((args.until === undefined) === (args.duration === undefined)) {
    throw new ValidationError('snooze needs exactly one of until or duration', {
      code: 'invalid_request',
      details: { fields: ['until', 'duration'] },
    });
  }
  if (args.until !== undefined) {
    const ms = Date.parse(args.until);
    if (Number.isNaN(ms) || !/^\d{4}-\d{2}-\d{2}T/.test(args.until))
      throw new ValidationError(`until: "${args.until}" is not an ISO 8601 timestamp`, {
        code: 'invalid_request',
        details: { field: 'until' },
      });
    return ms;
  }
  return nowMs + parseDurationMs(args.duration!);
}
