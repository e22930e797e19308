/**
 * Duration: a parsed span of time handed to the scheduler (health intervals, drain timeouts,
 * batch time limits), never a bare number or an unparsed string.
 */

/** A span of time in whole milliseconds, as parsed from a spec's Go duration. */
export interface Duration {
  readonly milliseconds: number;
}

/** Builds a duration of `value` milliseconds; throws on negative or non-finite input. */
export function milliseconds(value: number): Duration {
  if (!Number.isFinite(value) || value < 0) {
    throw new RangeError(`duration: ${value} is not a non-negative finite number of milliseconds`);
  }
  return { milliseconds: Math.round(value) };
}

/** Builds a duration of `value` seconds. */
export function seconds(value: number): Duration {
  return milliseconds(value * 1000);
}
