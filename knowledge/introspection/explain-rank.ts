/**
 * Explains why one node outranks another: both are scored under the same query and anchors, and
 * the four weighted components are compared factor by factor.
 */
import { NotFoundError, ValidationError } from '../../domain/errors.js';
import { DEFAULT_SOURCE_CREDIBILITY, type MemType, type NamespaceMode } from '../../domain/knowledge/modes.js';
import {
  confidenceScore,
  recencyScore,
  scoreCandidate,
  clamp01,
  corroboration,
  type Score,
} from '../../domain/knowledge/retrieval/scoring.js';
import { cosine } from '../../domain/knowledge/retrieval/vector-math.js';
import { parseLexicalQuery, satisfiesLiterals, termCoverage } from '../../domain/knowledge/retrieval/lexical-query.js';
import type { VersionRow } from '../../store/knowledge/rows.js';
import type { KnowledgeState, Namespace } from '../core/knowledge-state.js';
import { weightsFor, type RetrieveRequest } from '../retrieve/retrieve-service.js';

/** Input of explain-rank. */
export interface ExplainRankInput {
  readonly nodeId: string;
  readonly otherNodeId: string;
  readonly text?: string;
  readonly vector?: readonly number[];
  readonly scoreParams?: RetrieveRequest['score_params'];
  readonly mode?: NamespaceMode;
  /** Valid-time anchor (epoch ms) of both nodes and their recency. @default now */
  readonly asOf?: number;
  /** Hops of edges walked for evidence links (the origin's `max_depth`). @default 1 */
  readonly maxDepth?: number;
}

/** Largest evidence walk of explain-rank. */
export const EXPLAIN_MAX_DEPTH = 5;

/** Evidence behind a node's confidence. */
export interface RankEvidence {
  readonly compoundConfidence: number;
  readonly supportCount: number;
  readonly links: { nodeId: string; edgeId: string; edgeWeight: number; confidence: number; text: string }[];
}

/** One side of the comparison. */
export interface RankSide {
  readonly nodeId: string;
  readonly score: number;
  readonly scoreBreakdown: Score['breakdown'];
  readonly evidence: RankEvidence;
}

/** The explainRank result (GraphQL shape; REST renders it in snake_case). */
export interface ExplainRankResult {
  readonly winnerNodeId: string;
  readonly loserNodeId: string;
  readonly margin: number;
  readonly summary: string;
  readonly node: RankSide;
  readonly other: RankSide;
  readonly factors: { factor: string; nodeContribution: number; otherContribution: number; delta: number }[];
}

const FACTORS = ['similarity', 'confidence', 'recency', 'utility'] as const;

/** Compares the ranking of two nodes. */
export class ExplainRankService {
  readonly #core: KnowledgeState;

  constructor(core: KnowledgeState) {
    this.#core = core;
  }

  async explain(tenant: string, nsName: string, input: ExplainRankInput): Promise<ExplainRankResult> {
    const core = this.#core;
    const ns = core.namespace(tenant, nsName);
    if (input.nodeId === input.otherNodeId)
      throw new ValidationError('node_id and other_node_id must differ', { code: 'invalid_request' });
    let queryVector: Float32Array | undefined = input.vector ? Float32Array.from(input.vector) : undefined;
    if (!queryVector && input.text && core.embedder) queryVector = (await core.embedder.embed([input.text]))[0];
    const now = core.now();
    const at = input.asOf ?? now;
    const a = this.#side(ns, input.nodeId, input, queryVector, at, now);
    const b = this.#side(ns, input.otherNodeId, input, queryVector, at, now);
    const factors = FACTORS.map((f) => ({
      factor: f,
      nodeContribution: a.scoreBreakdown[f],
      otherContribution: b.scoreBreakdown[f],
      delta: a.scoreBreakdown[f] - b.scoreBreakdown[f],
    }));
    const nodeWins = a.score > b.score || (a.score === b.score && a.nodeId < b.nodeId);
    const [winner, loser] = nodeWins ? [a, b] : [b, a];
    const decisive = [...factors].sort((x, y) => Math.abs(y.delta) - Math.abs(x.delta))[0]!;
    const margin = winner.score - loser.score;
    return {
      winnerNodeId: winner.nodeId,
      loserNodeId: loser.nodeId,
      margin,
      summary:
        margin === 0
          ? `${winner.nodeId} and ${loser.nodeId} tie at ${winner.score.toFixed(4)}`
          : `${winner.nodeId} outranks ${loser.nodeId} by ${margin.toFixed(4)}; the largest difference is ${decisive.factor} (${decisive.delta >= 0 === nodeWins ? '+' : '-'}${Math.abs(decisive.delta).toFixed(4)})`,
      node: a,
      other: b,
      factors,
    };
  }

  #side(
    ns: Namespace,
    id: string,
    input: ExplainRankInput,
    queryVector: Float32Array | undefined,
    at: number,
    now: number,
  ): RankSide {
    const core = this.#core;
    const node = core.nodes.node(id);
    const row: VersionRow | undefined = node && node.ns_id === ns.id ? core.nodes.visible(node.id, at, now) : undefined;
    if (!row)
      throw new NotFoundError(
        `node ${id} does not exist (or is not valid ${at === now ? 'now' : 'at as_of'}) in namespace "${ns.name}"`,
        { code: 'node_not_found' },
      );
    const sources = core.nodes.support(row.vid);
    const credibilities = sources.map((s) => core.credibility(ns.id, s, DEFAULT_SOURCE_CREDIBILITY));
    let similarity = 0;
    if (queryVector && row.dims === queryVector.length) {
      const v = core.index.vector(row.dims, row.vid);
      if (v) similarity = clamp01(cosine(queryVector, v));
    } else if (input.text) {
      const q = parseLexicalQuery(input.text);
      similarity = satisfiesLiterals(row.content, q.literals) ? termCoverage(row.content, q) : 0;
    }
    const score = scoreCandidate(
      {
        similarity,
        confidence: row.retracted === 1 ? 0 : confidenceScore(row.confidence, credibilities),
        recency: recencyScore(at - row.valid_from, row.mem_type as MemType | null, input.scoreParams?.decay_alpha),
        utility: row.utility,
      },
      weightsFor(input.mode ?? ns.mode, input.scoreParams),
    );
    const links = this.#links(row.node_id, Math.min(EXPLAIN_MAX_DEPTH, Math.max(1, input.maxDepth ?? 1)), at, now);
    return {
      nodeId: row.node_id,
      score: score.score,
      scoreBreakdown: score.breakdown,
      evidence: {
        compoundConfidence: clamp01(row.confidence) * corroboration(credibilities),
        supportCount: sources.length,
        links,
      },
    };
  }

  /** Edges around a node, breadth first up to `depth` hops; each edge listed once. */
  #links(start: string, depth: number, at: number, now: number): RankEvidence['links'] {
    const core = this.#core;
    const links: RankEvidence['links'] = [];
    const seenEdges = new Set<string>();
    const seenNodes = new Set([start]);
    let frontier = [start];
    for (let hop = 0; hop < depth && frontier.length > 0; hop++) {
      const next: string[] = [];
      for (const from of frontier) {
        for (const e of core.edges.touching(from, now)) {
          if (seenEdges.has(e.id)) continue;
          seenEdges.add(e.id);
          const otherId = e.from_id === from ? e.to_id : e.from_id;
          const other = core.nodes.visible(otherId, at, now);
          links.push({
            nodeId: otherId,
            edgeId: e.id,
            edgeWeight: e.weight,
            confidence: other?.confidence ?? 0,
            text: other?.content ?? '',
          });
          if (!seenNodes.has(otherId)) {
            seenNodes.add(otherId);
            next.push(otherId);
          }
        }
      }
      frontier = next;
    }
    return links;
  }
}

/** The REST (snake_case) rendering of an explainRank result. */
export function explainRankRest(r: ExplainRankResult) {
  const side = (s: RankSide) => ({
    node_id: s.nodeId,
    score: s.score,
    score_breakdown: s.scoreBreakdown,
    evidence: {
      compound_confidence: s.evidence.compoundConfidence,
      support_count: s.evidence.supportCount,
      links: s.evidence.links.map((l) => ({
        node_id: l.nodeId,
        edge_id: l.edgeId,
        edge_weight: l.edgeWeight,
        confidence: l.confidence,
        text: l.text,
      })),
    },
  });
  return {
    winner_node_id: r.winnerNodeId,
    loser_node_id: r.loserNodeId,
    margin: r.margin,
    summary: r.summary,
    node: side(r.node),
    other: side(r.other),
    factors: r.factors.map((f) => ({
      factor: f.factor,
      node_contribution: f.nodeContribution,
      other_contribution: f.otherContribution,
      delta: f.delta,
    })),
  };
}
