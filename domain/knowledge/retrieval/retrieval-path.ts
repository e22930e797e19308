/**
 * Which candidate paths a retrieval runs, as one label value of the retrieval latency histogram:
 * `vector` (caller vectors), `text` (lexical), `graph` (seed walk), or `hybrid` when more than one
 * runs (a text query also runs the vector path when the store has an embedder).
 */

/** The retrieval path classes. */
export const RetrievalPath = { vector: 'vector', text: 'text', graph: 'graph', hybrid: 'hybrid' } as const;
export type RetrievalPath = (typeof RetrievalPath)[keyof typeof RetrievalPath];
export const RETRIEVAL_PATHS: readonly RetrievalPath[] = Object.values(RetrievalPath);

/** The query fields that select paths (the REST retrieve body, or a GraphQL search's text). */
export interface RetrievalQueryShape {
  readonly vector?: readonly number[] | undefined;
  readonly vectors?: readonly (readonly number[])[] | undefined;
  readonly text?: string | undefined;
  readonly seed_ids?: readonly string[] | undefined;
}

/** The path class of a query; undefined when it selects no path (an invalid request). */
export function retrievalPathOf(query: RetrievalQueryShape, embedsText: boolean): RetrievalPath | undefined {
  const hasText = query.text !== undefined && query.text.trim() !== '';
  const paths = new Set<RetrievalPath>();
  if (query.vector !== undefined || (query.vectors?.length ?? 0) > 0 || (hasText && embedsText)) paths.add('vector');
  if (hasText) paths.add('text');
  if ((query.seed_ids?.length ?? 0) > 0) paths.add('graph');
  if (paths.size === 0) return undefined;
  return paths.size === 1 ? [...paths][0] : 'hybrid';
}
