/**
 * Typed query-string parameters of the knowledge REST routes; malformed values are 400s naming
 * the parameter.
 */
import type { Context } from 'koa';
import { ValidationError } from '../../domain/errors.js';
import { parseWholeNumber } from '../http/whole-number-query.js';

/** The first value of a query parameter. */
export function stringParam(ctx: Context, name: string): string | undefined {
  const raw = ctx.query[name];
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value !== undefined && value.length > 1000)
    throw new ValidationError(`${name}: longer than 1000 characters`, { code: 'invalid_request' });
  return value;
}

/** A whole number from 0 to `max`, or `fallback`. */
export function intParam(ctx: Context, name: string, fallback: number, max: number, min = 0): number {
  const text = stringParam(ctx, name);
  if (text === undefined) return fallback;
  const value = parseWholeNumber(text, min, max);
  if (value === undefined)
    throw new ValidationError(`${name}: must be a whole number from ${min} to ${max}`, { code: 'invalid_request' });
  return value;
}

/** A finite number, or undefined when absent. */
export function numberParam(ctx: Context, name: string): number | undefined {
  const text = stringParam(ctx, name);
  if (text === undefined) return undefined;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value))
    throw new ValidationError(`${name}: "${text.slice(0, 64)}" is not a number`, { code: 'invalid_request' });
  return value;
}

/** A list given as repeated parameters or comma-separated values. */
export function listParam(ctx: Context, name: string): string[] | undefined {
  const raw = ctx.query[name];
  if (raw === undefined) return undefined;
  return (Array.isArray(raw) ? raw : [raw])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

/** One of `values`, or undefined when absent. */
export function enumParam<T extends string>(ctx: Context, name: string, values: readonly T[]): T | undefined {
  const text = stringParam(ctx, name);
  if (text === undefined) return undefined;
  if (!(values as readonly string[]).includes(text))
    throw new ValidationError(`${name}: "${text.slice(0, 64)}" is not one of ${values.join(', ')}`, {
      code: 'invalid_request',
    });
  return text as T;
}
