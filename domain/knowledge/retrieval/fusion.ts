/**
 * Candidate fusion across retrieval paths: Reciprocal Rank Fusion for the fused order, and a
 * similarity component comparable across paths. Pure functions.
 */

/** RRF damping constant (Cormack et al. 2009). */
export const RRF_K = 60;

/** One ranked list from one retrieval path; similarity in [0, 1], best first. */
export interface PathList {
  readonly path: string;
  readonly items: readonly { readonly key: string; readonly similarity: number }[];
  /** Weight of the list's kind of path when kinds mix (`fusionWeights`); @default 0.5 */
  readonly weight?: number;
}

/** How far the lexical path's query coverage moves the text weight from the even 0.5 (docs/adr/0180). */
export const COVERAGE_SHIFT = 0.3;

/**
 * Adaptive hybrid weights: the text path counts `0.5 + COVERAGE_SHIFT · coverage` and vector paths
 * the rest, where `coverage` in [0, 1] is the IDF-weighted share of the query's own words that its
 * best text candidate holds. A query whose words are all found in a row is answered mostly by those
 * rows; a query whose words are rare or absent (other words, only thesaurus expansions) leans on
 * the embedding.
 */
export function fusionWeights(coverage: number): { text: number; vector: number } {
  const c = Math.min(1, Math.max(0, coverage));
  return { text: 0.5 + COVERAGE_SHIFT * c, vector: 0.5 - COVERAGE_SHIFT * c };
}

/** A fused candidate. */
export interface FusedCandidate {
  readonly key: string;
  /** Sum over paths of 1 / (RRF_K + rank). */
  readonly rrf: number;
  /** Highest similarity any path gave the candidate. */
  readonly similarity: number;
  /** Paths that found the candidate, in the order given. */
  readonly paths: readonly string[];
}

/**
 * Fuses ranked lists; the result is ordered by RRF score, ties by similarity, then key.
 *
 * Similarity: when every list comes from one kind of path (only vectors, only text), the highest
 * similarity any list gave. When kinds mix (text and vector: hybrid), their scales differ (bm25
 * relative to the best match; cosines bunched near each other), so each kind's similarities are
 * min-max normalized over its candidates and the kinds are averaged with their lists' weights
 * (equal by default), a missing kind counting 0: the convex combination of Bruch et al. (2023),
 * docs/adr/0022 and 0180.
 */
export function fuseLists(lists: readonly PathList[]): FusedCandidate[] {
  const byKey = new Map<string, { rrf: number; similarity: number; paths: string[]; byKind: Map<string, number> }>();
  const range = new Map<string, { lo: number; hi: number }>();
  const weight = new Map<string, number>();
  for (const list of lists) {
    weight.set(list.path, Math.max(weight.get(list.path) ?? 0, list.weight ?? 0.5));
    list.items.forEach((item, index) => {
      const entry = byKey.get(item.key) ?? { rrf: 0, similarity: 0, paths: [], byKind: new Map<string, number>() };
      entry.rrf += 1 / (RRF_K + index + 1);
      entry.similarity = Math.max(entry.similarity, item.similarity);
      entry.byKind.set(list.path, Math.max(entry.byKind.get(list.path) ?? 0, item.similarity));
      const r = range.get(list.path) ?? { lo: Infinity, hi: -Infinity };
      range.set(list.path, { lo: Math.min(r.lo, item.similarity), hi: Math.max(r.hi, item.similarity) });
      if (!entry.paths.includes(list.path)) entry.paths.push(list.path);
      byKey.set(item.key, entry);
    });
  }
  const kinds = [...range.keys()];
  const totalWeight = kinds.reduce((sum, kind) => sum + weight.get(kind)!, 0);
  const normalized = (kind: string, value: number) => {
    const { lo, hi } = range.get(kind)!;
    return hi - lo < 1e-9 ? 1 : (value - lo) / (hi - lo);
  };
  return [...byKey.entries()]
    .map(([key, e]) => ({
      key,
      rrf: e.rrf,
      similarity:
        kinds.length > 1
          ? [...e.byKind].reduce((sum, [kind, v]) => sum + weight.get(kind)! * normalized(kind, v), 0) /
            Math.max(1e-9, totalWeight)
          : e.similarity,
      paths: e.paths,
    }))
    .sort((a, b) => b.rrf - a.rrf || b.similarity - a.similarity || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}
