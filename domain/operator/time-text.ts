/**
 * Human text for instants in the operator views: a local wall-clock form in a time zone and a
 * relative form ("in 2h 5m", "3m ago").
 */

/** An instant shown three ways. */
export interface InstantText {
  /** ISO 8601 UTC. */
  readonly at: string;
  /** Wall-clock time in the schedule's zone, e.g. `2025-03-01 03:00 UTC`. */
  readonly local: string;
  /** Relative to now, e.g. `in 2h 5m` or `3m ago`. */
  readonly relative: string;
}

export { isKnownTimeZone } from '../spec/time-zone.js';

/** `date` as `YYYY-MM-DD HH:MM <zone abbreviation>` in `zone`. */
export function formatInZone(date: Date, zone: string): string {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'short',
  }).formatToParts(date);
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')} ${part('timeZoneName')}`;
}

/** A duration in the two largest units: `2d 3h`, `5h 12m`, `4m 10s`, `42s`. */
export function durationText(ms: number): string {
  const total = Math.round(Math.abs(ms) / 1000);
  const units: [string, number][] = [
    ['d', 86_400],
    ['h', 3_600],
    ['m', 60],
    ['s', 1],
  ];
  const shown: string[] = [];
  let rest = total;
  for (const [label, size] of units) {
    const count = Math.floor(rest / size);
    rest -= count * size;
    if (count > 0 || shown.length > 0) shown.push(`${count}${label}`);
    if (shown.length === 2) break;
  }
  const text = shown.filter((s, i) => i === 0 || !s.startsWith('0')).join(' ');
  return text === '' ? '0s' : text;
}

/** `atMs` relative to `nowMs`: `now` within a second, else `in …` or `… ago`. */
export function relativeText(atMs: number, nowMs: number): string {
  const delta = atMs - nowMs;
  if (Math.abs(delta) < 1000) return 'now';
  return delta > 0 ? `in ${durationText(delta)}` : `${durationText(delta)} ago`;
}

/** The three forms of an instant. */
export function instantText(at: Date, zone: string, nowMs: number): InstantText {
  return { at: at.toISOString(), local: formatInZone(at, zone), relative: relativeText(at.getTime(), nowMs) };
}
