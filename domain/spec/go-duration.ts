/**
 * Go duration strings (`300ms`, `1h30m`, `-1.5h`), the duration notation of infraspec fields such as
 * `health.interval`, parsed the way Go's `time.ParseDuration` does.
 */
import { ValidationError } from '../errors.js';

/** A parsed Go duration: the text as written and the length of time it means. */
export interface GoDurationValue {
  /** The duration as written in the spec. */
  readonly text: string;
  /** Length in nanoseconds, exact (Go durations are whole nanoseconds within a signed 64-bit range). */
  readonly nanoseconds: bigint;
  /** Length in milliseconds; may be fractional (`300us` is 0.3) or negative (`-1.5h`). */
  readonly milliseconds: number;
}

/** Outcome of {@link tryParseGoDuration}: the value, or why the text is not a Go duration. */
export type GoDurationParse =
  { readonly ok: true; readonly value: GoDurationValue } | { readonly ok: false; readonly reason: string };

const nanosecondsPerUnit: ReadonlyMap<string, bigint> = new Map([
  ['ns', 1n],
  ['us', 1_000n],
  ['\u00b5s', 1_000n], // micro sign
  ['\u03bcs', 1_000n], // Greek small letter mu
  ['ms', 1_000_000n],
  ['s', 1_000_000_000n],
  ['m', 60_000_000_000n],
  ['h', 3_600_000_000_000n],
]);

const maxNanoseconds = (1n << 63n) - 1n;
const unitHint = 'write a number with a unit (ns, us, ms, s, m, h), for example 10s, 1m30s or 300ms';

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= '0' && c <= '9';
}

/** Parses a Go duration without throwing; `reason` explains a rejection in words for a message. */
export function tryParseGoDuration(text: string): GoDurationParse {
  if (typeof text !== 'string') return { ok: false, reason: 'not a string' };
  let rest = text;
  let negative = false;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    negative = rest.startsWith('-');
    rest = rest.slice(1);
  }
  if (rest === '0') return { ok: true, value: { text, nanoseconds: 0n, milliseconds: 0 } };
  if (rest === '') return { ok: false, reason: `empty; ${unitHint}` };
  let total = 0n;
  while (rest !== '') {
    let i = 0;
    while (isDigit(rest[i])) i += 1;
    const whole = rest.slice(0, i);
    let fraction = '';
    if (rest[i] === '.') {
      const start = i + 1;
      i = start;
      while (isDigit(rest[i])) i += 1;
      fraction = rest.slice(start, i);
    }
    if (whole === '' && fraction === '') return { ok: false, reason: `expected a number at "${rest}"; ${unitHint}` };
    let u = i;
    while (u < rest.length && rest[u] !== '.' && !isDigit(rest[u])) u += 1;
    const unit = rest.slice(i, u);
    if (unit === '') return { ok: false, reason: `missing unit; ${unitHint}` };
    const scale = nanosecondsPerUnit.get(unit);
    if (scale === undefined) return { ok: false, reason: `unknown unit "${unit}"; ${unitHint}` };
    let component = BigInt(whole === '' ? '0' : whole) * scale;
    if (fraction !== '') component += (BigInt(fraction) * scale) / 10n ** BigInt(fraction.length);
    total += component;
    if (total > maxNanoseconds + (negative ? 1n : 0n))
      return { ok: false, reason: 'too long (more than about 292 years)' };
    rest = rest.slice(u);
  }
  const nanoseconds = negative ? -total : total;
  return { ok: true, value: { text, nanoseconds, milliseconds: Number(nanoseconds) / 1e6 } };
}

/**
 * Parses a Go duration string into a {@link GoDurationValue}.
 *
 * @throws ValidationError (code `invalid_duration`) naming the text and what is wrong with it.
 * @example parseGoDuration('1h30m').milliseconds === 5_400_000
 */
export function parseGoDuration(text: string): GoDurationValue {
  const parsed = tryParseGoDuration(text);
  if (!parsed.ok) {
    throw new ValidationError(`${JSON.stringify(text)} is not a Go duration: ${parsed.reason}`, {
      code: 'invalid_duration',
      details: { value: text },
    });
  }
  return parsed.value;
}

/** Renders whole seconds as a Go duration (`30` becomes `30s`). */
export function secondsToGoDuration(seconds: number): string {
  return `${seconds}s`;
}
