/**
 * Candidate fusion across retrieval paths: Reciprocal Rank Fusion for the fused order, and the
 * best calibrated per-path similarity as the similarity component. Pure functions.
 */

/** RRF damping constant (Cormack et al. 2009). */
export const RRF_K = 60;

/** One ranked list from one retrieval path; similarity in [0, 1], best first. */
export interface PathList {
  readonly path: string;
  readonly items: readonly { readonly key: string; readonly similarity: number }[];
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

/** Fuses ranked lists; the result is ordered by RRF score, ties by similarity, then key. */
export function fuseLists(lists: readonly PathList[]): FusedCandidate[] {
  const byKey = new Map<string, { rrf: number; similarity: number; paths: string[] }>();
  for (const list of lists) {
    list.items.forEach((item, index) => {
      const entry = byKey.get(item.key) ?? { rrf: 0, similarity: 0, paths: [] };
      entry.rrf += 1 / (RRF_K + index + 1);
      entry.similarity = Math.max(entry.similarity, item.similarity);
      if (!entry.paths.includes(list.path)) entry.paths.push(list.path);
      byKey.set(item.key, entry);
    });
  }
  return [...byKey.entries()]
    .map(([key, e]) => ({ key, rrf: e.rrf, similarity: e.similarity, paths: e.paths }))
    .sort((a, b) => b.rrf - a.rrf || b.similarity - a.similarity || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}
