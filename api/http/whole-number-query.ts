/**
 * Whole-number query parameters, parsed one way for both services: decimal digits only (no sign,
 * exponent, hex or spaces), within a range. Each service keeps its own error wording and code.
 */
import { ValidationError } from '../../domain/errors.js';

/** The whole number `raw` spells when it is a digit string from `min` to `max`, else undefined. */
export function parseWholeNumber(raw: unknown, min: number, max: number): number | undefined {
  if (typeof raw !== 'string' || !/^\d+$/.test(raw)) return undefined;
  const value = Number(raw);
  return value >= min && value <= max ? value : undefined;
}

/** A control-plane paging parameter: `fallback` when absent, else a whole number up to `max` (400 `invalid_query`). */
export function wholeNumberQuery(raw: unknown, name: string, fallback: number, max: number): number {
  if (raw === undefined) return fallback;
  const value = parseWholeNumber(raw, 0, max);
  if (value === undefined)
    throw new ValidationError(
      `${name}: "${typeof raw === 'string' ? raw : JSON.stringify(raw)}" must be a whole number up to ${max}`,
      { code: 'invalid_query' },
    );
  return value;
}
