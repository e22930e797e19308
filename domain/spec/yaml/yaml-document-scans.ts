/**
 * Scans of a composed YAML document for what a spec refuses or must point at: keys set twice in a
 * map, maps or lists used as keys, and the first alias.
 */
import { isMap, isScalar, isSeq, visit, type Document } from 'yaml';

/** Keys set twice in the same map (in linear time), with the offsets of both occurrences. */
export function duplicateKeys(doc: Document, max: number): Array<{ key: string; offset: number; firstOffset: number }> {
  const found: Array<{ key: string; offset: number; firstOffset: number }> = [];
  visit(doc, {
    Map(_key, map) {
      const seen = new Map<string, number>();
      for (const item of map.items) {
        if (!isScalar(item.key)) continue;
        const name = String(item.key.value);
        const offset = item.key.range?.[0] ?? 0;
        const firstOffset = seen.get(name);
        if (firstOffset === undefined) seen.set(name, offset);
        else found.push({ key: name, offset, firstOffset });
      }
      return found.length >= max ? visit.BREAK : undefined;
    },
  });
  return found.slice(0, max);
}

/** Offset of the first alias (`*name`) in the document, or 0. */
export function firstAliasOffset(doc: Document): number {
  let offset = 0;
  visit(doc, {
    Alias(_key, node) {
      offset = node.range?.[0] ?? 0;
      return visit.BREAK;
    },
  });
  return offset;
}

/** Offset of the first map key that is itself a map or list (`? [a, b]: c`), if any. */
export function firstCollectionKeyOffset(doc: Document): number | undefined {
  let offset: number | undefined;
  visit(doc, {
    Pair(_key, pair) {
      if (isMap(pair.key) || isSeq(pair.key)) {
        offset = pair.key.range?.[0] ?? 0;
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return offset;
}
