/**
 * The GraphQL search filter: a boolean tree of predicates over a scored node. Pure evaluation.
 */

/** A node as the filter sees it. Times are epoch milliseconds; an open valid_to is Infinity. */
export interface FilterableNode {
  readonly content: string;
  readonly similarity: number;
  readonly validFrom: number;
  readonly validTo: number;
  readonly edges: readonly { readonly to: string; readonly type: string; readonly weight: number }[];
  readonly sourceCredibilities: readonly number[];
}

/** The search filter input (GraphQL `SearchFilter`), times already parsed to epoch milliseconds. */
export interface SearchFilter {
  readonly and?: readonly SearchFilter[] | null;
  readonly or?: readonly SearchFilter[] | null;
  readonly not?: SearchFilter | null;
  readonly contentContains?: string | null;
  readonly similarityMin?: number | null;
  readonly hasEdgeTo?: string | null;
  readonly edgeTypes?: readonly string[] | null;
  readonly edgeWeightMin?: number | null;
  readonly sourceCredibilityMin?: number | null;
  readonly sourceCredibilityMax?: number | null;
  readonly validAt?: number | null;
  readonly validFromBefore?: number | null;
  readonly validToAfter?: number | null;
}

/**
 * True when `node` satisfies every predicate set on `filter` (predicates on one level are ANDed).
 * Edge predicates (hasEdgeTo, edgeTypes, edgeWeightMin) must hold for one and the same edge.
 * Source credibility bounds hold when some supporting source lies within them.
 */
export function matchesFilter(node: FilterableNode, filter: SearchFilter | null | undefined): boolean {
  if (!filter) return true;
  if (filter.and && !filter.and.every((f) => matchesFilter(node, f))) return false;
  if (filter.or && filter.or.length > 0 && !filter.or.some((f) => matchesFilter(node, f))) return false;
  if (filter.not && matchesFilter(node, filter.not)) return false;
  if (filter.contentContains != null && !node.content.toLowerCase().includes(filter.contentContains.toLowerCase()))
    return false;
  if (filter.similarityMin != null && node.similarity < filter.similarityMin) return false;
  const edgeFilter =
    filter.hasEdgeTo != null ||
    (filter.edgeTypes != null && filter.edgeTypes.length > 0) ||
    filter.edgeWeightMin != null;
  if (edgeFilter) {
    const ok = node.edges.some(
      (e) =>
        (filter.hasEdgeTo == null || e.to === filter.hasEdgeTo) &&
        (filter.edgeTypes == null || filter.edgeTypes.length === 0 || filter.edgeTypes.includes(e.type)) &&
        (filter.edgeWeightMin == null || e.weight >= filter.edgeWeightMin),
    );
    if (!ok) return false;
  }
  if (filter.sourceCredibilityMin != null || filter.sourceCredibilityMax != null) {
    const ok = node.sourceCredibilities.some(
      (c) =>
        (filter.sourceCredibilityMin == null || c >= filter.sourceCredibilityMin) &&
        (filter.sourceCredibilityMax == null || c <= filter.sourceCredibilityMax),
    );
    if (!ok) return false;
  }
  if (filter.validAt != null && !(node.validFrom <= filter.validAt && filter.validAt < node.validTo)) return false;
  if (filter.validFromBefore != null && !(node.validFrom < filter.validFromBefore)) return false;
  if (filter.validToAfter != null && !(node.validTo > filter.validToAfter)) return false;
  return true;
}
