/**
 * Parsers of `SVC_*` variable values: each returns the typed value or throws a `ConfigError` naming
 * the variable and what is wrong, and an unset or empty variable gets the default.
 */
import path from 'node:path';
import { ConfigError } from '../domain/errors.js';

export type Env = Readonly<Record<string, string | undefined>>;

export interface VariableSpec<T> {
  readonly name: string;
  readonly description: string;
  readonly secret?: boolean;
  readonly defaultText: string;
  parse(raw: string | undefined, env: Env): T;
}

export function port(name: string, fallback: number): (raw: string | undefined) => number {
  return (raw) => {
    if (raw === undefined || raw === '') return fallback;
    if (!/^\d+$/.test(raw)) throw new ConfigError(name, `"${raw}" is not a port number`);
    const value = Number(raw);
    if (value < 0 || value > 65535) throw new ConfigError(name, `${value} is outside 0-65535`);
    return value;
  };
}

export function bool(name: string, fallback: boolean): (raw: string | undefined) => boolean {
  return (raw) => {
    if (raw === undefined || raw === '') return fallback;
    const v = raw.toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(v)) return true;
    if (['0', 'false', 'no', 'off'].includes(v)) return false;
    throw new ConfigError(name, `"${raw}" is not a boolean (use true or false)`);
  };
}

export function oneOf<T extends string>(
  name: string,
  values: readonly T[],
  fallback: T,
): (raw: string | undefined) => T {
  return (raw) => {
    if (raw === undefined || raw === '') return fallback;
    if ((values as readonly string[]).includes(raw)) return raw as T;
    throw new ConfigError(name, `"${raw}" is not one of ${values.join(', ')}`);
  };
}

/** Parses a byte size such as `512kb`, `1mb`, `1048576`. */
export function parseByteSize(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*(b|kb|kib|mb|mib|gb|gib)?$/i.exec(text.trim());
  if (!match) return undefined;
  const unit = (match[2] ?? 'b').toLowerCase();
  const factor: Record<string, number> = {
    b: 1,
    kb: 1024,
    kib: 1024,
    mb: 1024 ** 2,
    mib: 1024 ** 2,
    gb: 1024 ** 3,
    gib: 1024 ** 3,
  };
  return Math.floor(Number(match[1]) * (factor[unit] ?? 1));
}

export function optional(raw: string | undefined): string | undefined {
  return raw === undefined || raw === '' ? undefined : raw;
}

/** Parses a duration such as `500ms`, `30s`, `15m`, `24h`, `7d` (`0` or `off` when `allowOff`). */
export function durationMs(name: string, fallbackMs: number, allowOff = false): (raw: string | undefined) => number {
  return (raw) => {
    const value = optional(raw);
    if (value === undefined) return fallbackMs;
    if (allowOff && (value === '0' || value.toLowerCase() === 'off')) return 0;
    const match = /^(\d+)(ms|s|m|h|d)$/.exec(value);
    const unit: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
    if (!match || Number(match[1]) <= 0)
      throw new ConfigError(
        name,
        `"${value}" is not a duration such as 30s, 15m, 24h or 7d${allowOff ? ' (or off)' : ''}`,
      );
    return Number(match[1]) * unit[match[2]!]!;
  };
}

/** A whole number in `min`-`max`. */
export function wholeNumber(
  name: string,
  fallback: number,
  min: number,
  max: number,
): (raw: string | undefined) => number {
  return (raw) => {
    const value = optional(raw);
    if (value === undefined) return fallback;
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
      throw new ConfigError(name, `"${value}" is not a whole number in ${min}-${max}`);
    return Number(value);
  };
}

/** An optional http(s) URL. */
export function httpUrl(name: string): (raw: string | undefined) => string | undefined {
  return (raw) => {
    const value = optional(raw);
    if (value !== undefined && !/^https?:\/\/[^\s]+$/.test(value))
      throw new ConfigError(name, `"${value}" is not an http(s) URL`);
    return value;
  };
}

/** A request timeout such as `800ms` or `10s` (a bare number is milliseconds), in milliseconds. */
export function requestTimeoutMs(name: string, fallback: string): (raw: string | undefined) => number {
  return (raw) => {
    const value = optional(raw) ?? fallback;
    const match = /^(\d+)(ms|s)?$/.exec(value);
    if (!match || Number(match[1]) <= 0)
      throw new ConfigError(name, `"${value}" is not a duration such as ${fallback} or 500ms`);
    return Number(match[1]) * (match[2] === 's' ? 1000 : 1);
  };
}

/** A path under the data folder (`SVC_DATA_DIR`, default `./.data`), for defaults that live there. */
export function dataPath(env: Env, ...parts: string[]): string {
  return path.resolve(optional(env.SVC_DATA_DIR) ?? '.data', ...parts);
}
