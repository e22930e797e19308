/**
 * Copying a document value into plain data (maps, lists, strings, numbers, booleans, null) while enforcing
 * the nesting and size limits, so validation never walks a cyclic, enormous or exotic object.
 */
import { describeKind, type PathSegment } from './finding.js';
import { SpecRule } from './rules/spec-rule.js';

/** A reason the copied value cannot be validated. */
export interface CloneProblem {
  readonly path: readonly PathSegment[];
  readonly rule: string;
  readonly detail: string;
}

/** The plain copy and what stopped it, if anything. */
export interface CloneResult {
  /** The plain copy; `undefined` when a limit was exceeded or the value could not be read. */
  readonly value: unknown;
  /** True when `value` is a faithful plain copy and can be validated. */
  readonly readable: boolean;
  readonly problems: readonly CloneProblem[];
}

/** Limits applied while copying. */
export interface CloneLimits {
  /** Deepest accepted nesting of maps and lists (the root map is level 1). */
  readonly maxDepth: number;
  /** Most values (maps, lists and scalars) accepted. */
  readonly maxNodes: number;
}

class LimitExceeded extends Error {
  constructor(
    readonly rule: string,
    readonly path: readonly PathSegment[],
    readonly detail: string,
  ) {
    super(detail);
  }
}

function kindOfExotic(value: unknown): string {
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'symbol') return 'a symbol';
  if (typeof value === 'bigint') return 'a bigint';
  if (value instanceof Uint8Array) return 'binary data';
  if (value instanceof Date) return 'a date';
  const name = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  return typeof name === 'string' && name !== '' ? `a ${name} object` : describeKind(value);
}

/**
 * Copies `value` into plain data. Maps keep only their own enumerable string keys; `undefined` properties
 * are dropped and `undefined` list items become null (as in JSON). Functions, symbols, bigints, binary data,
 * dates and class instances are reported as unsupported. Never throws.
 */
export function cloneWithinLimits(value: unknown, limits: CloneLimits): CloneResult {
  const path: PathSegment[] = [];
  const unsupported: CloneProblem[] = [];
  let nodes = 0;

  const copy = (current: unknown, level: number): unknown => {
    nodes += 1;
    if (nodes > limits.maxNodes) {
      throw new LimitExceeded(
        SpecRule.documentTooLarge,
        [...path],
        `the document holds more than ${limits.maxNodes} values`,
      );
    }
    if (current === null || ['string', 'number', 'boolean'].includes(typeof current)) return current;
    if (typeof current !== 'object') {
      unsupported.push({
        path: [...path],
        rule: SpecRule.documentUnsupportedValue,
        detail: `${kindOfExotic(current)} cannot appear in a spec`,
      });
      return null;
    }
    if (level + 1 > limits.maxDepth) {
      throw new LimitExceeded(
        SpecRule.documentTooDeep,
        [...path],
        `maps and lists are nested more than ${limits.maxDepth} levels deep`,
      );
    }
    if (Array.isArray(current)) {
      const out: unknown[] = [];
      for (let index = 0; index < current.length; index += 1) {
        path.push(index);
        const item: unknown = current[index];
        out.push(item === undefined ? null : copy(item, level + 1));
        path.pop();
      }
      return out;
    }
    const proto: unknown = Object.getPrototypeOf(current);
    if (proto !== Object.prototype && proto !== null) {
      unsupported.push({
        path: [...path],
        rule: SpecRule.documentUnsupportedValue,
        detail: `${kindOfExotic(current)} cannot appear in a spec`,
      });
      return null;
    }
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(current)) {
      path.push(key);
      const item: unknown = (current as Record<string, unknown>)[key];
      if (item !== undefined) {
        // defineProperty: a "__proto__" key must stay a plain key, not change the copy's prototype.
        Object.defineProperty(out, key, {
          value: copy(item, level + 1),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      path.pop();
    }
    return out;
  };

  try {
    const copied = copy(value, 0);
    if (unsupported.length > 0) return { value: undefined, readable: false, problems: unsupported };
    return { value: copied, readable: true, problems: [] };
  } catch (error) {
    if (error instanceof LimitExceeded) {
      return {
        value: undefined,
        readable: false,
        problems: [{ path: error.path, rule: error.rule, detail: error.detail }],
      };
    }
    const detail =
      error instanceof RangeError
        ? 'maps and lists are nested too deeply to read'
        : `the value could not be read: ${messageOf(error)}`;
    const rule = error instanceof RangeError ? SpecRule.documentTooDeep : SpecRule.documentUnreadable;
    return { value: undefined, readable: false, problems: [{ path: [...path], rule, detail }] };
  }
}

function messageOf(error: unknown): string {
  try {
    return error instanceof Error ? error.message : String(error);
  } catch {
    return 'unknown error';
  }
}
