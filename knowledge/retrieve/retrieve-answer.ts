/**
 * The answer of `POST /retrieve`: each ranked node rendered with its scores, and the reranker's outcome.
 */
import type { Score, ScoreComponents } from '../../domain/knowledge/retrieval/scoring.js';
import type { VersionRow } from '../../store/knowledge/rows.js';
import { nodeHead, type NodeView } from '../core/node-view.js';
import { isoTime } from '../core/time.js';

/** A scored candidate with everything needed to render it. */
export interface RankedNode {
  readonly row: VersionRow;
  readonly sources: readonly string[];
  readonly credibilities: readonly number[];
  readonly score: Score;
  readonly paths: readonly string[];
}

/** Whether a configured reranker re-scored this retrieval (`reason` and `code` when it did not). */
export interface RerankOutcome {
  readonly applied: boolean;
  readonly candidates: number;
  readonly reason?: string;
  readonly code?: string;
}

/** One ranked result of `POST /retrieve`: the node's head, its scores and where it was found. */
export interface RetrieveResultItem extends Pick<
  NodeView,
  'id' | 'namespace' | 'version' | 'content' | 'labels' | 'properties'
> {
  readonly score: number;
  readonly similarity_score: number;
  readonly confidence_score: number;
  readonly recency_score: number;
  readonly utility_score: number;
  /** Weighted contributions; they sum to `score`. */
  readonly score_breakdown: ScoreComponents;
  /** The retrieval paths that found it, joined with `+` (`vector+text`). */
  readonly retrieval_source: string;
  readonly source_ids: string[];
  readonly retracted: boolean;
  readonly valid_from: string | null;
  readonly valid_to: string | null;
}

/** The answer of `POST /retrieve`: the ranked results, and the reranker's outcome when one is configured. */
export interface RetrieveResults {
  readonly results: RetrieveResultItem[];
  readonly rerank?: RerankOutcome & { readonly model?: string };
}

/** One REST result item. */
export function resultItem(r: RankedNode, namespace: string): RetrieveResultItem {
  const { score, row } = r;
  return {
    ...nodeHead(row, namespace),
    score: score.score,
    similarity_score: score.components.similarity,
    confidence_score: score.components.confidence,
    recency_score: score.components.recency,
    utility_score: score.components.utility,
    score_breakdown: { ...score.breakdown },
    retrieval_source: r.paths.join('+'),
    source_ids: [...r.sources],
    retracted: row.retracted === 1,
    valid_from: isoTime(row.valid_from),
    valid_to: isoTime(row.valid_to),
  };
}
