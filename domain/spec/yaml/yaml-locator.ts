/**
 * Where a field path sits in a composed YAML document, so findings can name a line and column.
 */
import {
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  type Document,
  type LineCounter,
  type Pair,
  type YAMLMap,
} from 'yaml';
import type { PathSegment, SourcePosition } from '../finding.js';

/** Which end of a `key: value` pair a position should point at. */
export const LocateTarget = {
  /** The value for scalars, the key for maps and lists (the most useful place for a message). */
  auto: 'auto',
  key: 'key',
  value: 'value',
} as const;
export type LocateTarget = (typeof LocateTarget)[keyof typeof LocateTarget];

/** Finds where a field path sits in the source; falls back to the nearest ancestor that exists. */
export type Locate = (path: readonly PathSegment[], target?: LocateTarget) => SourcePosition;

/** The line and column of a source offset. */
export function positionOf(lineCounter: LineCounter, offset: number): SourcePosition {
  const { line, col } = lineCounter.linePos(Math.max(0, offset));
  return { line, column: col };
}

/** Builds the `locate` function of a composed YAML document. */
export function locatorFor(doc: Document, lineCounter: LineCounter): Locate {
  // Key lookups are indexed once per map, so locating every finding of a wide map stays linear.
  const indexes = new WeakMap<object, Map<string, Pair>>();
  const pairOf = (map: YAMLMap, key: string): Pair | undefined => {
    let index = indexes.get(map);
    if (index === undefined) {
      index = new Map();
      for (const item of map.items) {
        if (isPair(item) && isScalar(item.key)) {
          const name = String(item.key.value);
          if (!index.has(name)) index.set(name, item);
        }
      }
      indexes.set(map, index);
    }
    return index.get(key);
  };
  return (path, target = LocateTarget.auto) => {
    let node: unknown = doc.contents;
    let keyNode: unknown = null;
    let complete = true;
    for (const segment of path) {
      for (let hops = 0; isAlias(node) && hops < 10; hops += 1) node = node.resolve(doc);
      if (isMap(node)) {
        const pair = pairOf(node, String(segment));
        if (pair === undefined) {
          complete = false;
          break;
        }
        keyNode = pair.key;
        node = pair.value;
      } else if (isSeq(node) && Number.isInteger(Number(segment))) {
        const item: unknown = node.items[Number(segment)];
        if (item === undefined) {
          complete = false;
          break;
        }
        keyNode = null;
        node = item;
      } else {
        complete = false;
        break;
      }
    }
    const emptyValue = node === null || (isScalar(node) && node.source === '' && node.value === null);
    const scalarLike = isScalar(node) || isAlias(node);
    let chosen: unknown;
    if (!complete || target === LocateTarget.key) chosen = keyNode ?? node;
    else if (target === LocateTarget.value) chosen = emptyValue ? (keyNode ?? node) : node;
    else chosen = scalarLike && !emptyValue ? node : (keyNode ?? node);
    const range = (chosen as { range?: [number, number, number] } | null)?.range;
    return range === undefined ? { line: 1, column: 1 } : positionOf(lineCounter, range[0]);
  };
}
