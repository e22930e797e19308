/**
 * GraphQL `search`: the retrieval pipeline over the query text, then the boolean filter tree,
 * rendered with edges and sources. Without any lexical or vector hit, it falls back to a bounded
 * content scan of the newest live nodes.
 */
import { DEFAULT_SOURCE_CREDIBILITY, type NamespaceMode } from '../../domain/knowledge/modes.js';
import { matchesFilter, type SearchFilter } from '../../domain/knowledge/retrieval/search-filter.js';
import { corroboration } from '../../domain/knowledge/retrieval/scoring.js';
import { OPEN_TIME } from '../../store/knowledge/rows.js';
import type { KnowledgeState } from '../core/knowledge-state.js';
import type { RankedNode, RetrieveService } from './retrieve-service.js';

/** A search hit in GraphQL shape. */
export interface SearchNode {
  readonly id: string;
  readonly content: string;
  readonly score: number;
  readonly scoreBreakdown: RankedNode['score']['breakdown'];
  readonly credibility: number;
  readonly edges: { type: string; weight: number; to: { id: string; content: string } }[];
  readonly sources: { name: string; effectiveCredibility: number }[];
}

/** Largest candidate pool a search filters. */
const SEARCH_POOL = 500;

/** Serves GraphQL search. */
export class SearchService {
  readonly #core: KnowledgeState;
  readonly #retrieve: RetrieveService;

  constructor(core: KnowledgeState, retrieve: RetrieveService) {
    this.#core = core;
    this.#retrieve = retrieve;
  }

  async search(
    tenant: string,
    nsName: string,
    mode: NamespaceMode,
    query: string,
    filter: SearchFilter | undefined,
    limit: number,
  ): Promise<{ totalCount: number; nodes: SearchNode[] }> {
    const core = this.#core;
    const ns = core.namespace(tenant, nsName);
    const pool = Math.max(limit * 10, 200);
    let ranked =
      query.trim() === ''
        ? []
        : await this.#retrieve.rank(
            ns,
            { text: query, top_k: Math.min(pool, SEARCH_POOL), candidate_k: Math.min(pool, SEARCH_POOL) },
            mode,
          );
    if (ranked.length === 0 && query.trim() !== '') {
      const rows = core.nodes.scanContains(ns.id, query.trim(), SEARCH_POOL);
      ranked = rows.map((row) => {
        const sources = core.nodes.support(row.vid);
        const credibilities = sources.map((s) => core.credibility(ns.id, s, DEFAULT_SOURCE_CREDIBILITY));
        const c = Math.min(1, row.confidence) * corroboration(credibilities);
        return {
          row,
          sources,
          credibilities,
          paths: ['scan'],
          score: {
            score: 0.5 * c,
            components: { similarity: 1, confidence: c, recency: 0, utility: 0 },
            breakdown: { similarity: 0, confidence: 0.5 * c, recency: 0, utility: 0 },
          },
        };
      });
    }
    const edges = core.edges.outgoingMany(ranked.map((r) => r.row.node_id));
    const hits: SearchNode[] = [];
    let total = 0;
    for (const r of ranked) {
      const out = edges.get(r.row.node_id) ?? [];
      const matches = matchesFilter(
        {
          content: r.row.content,
          similarity: r.score.components.similarity,
          validFrom: r.row.valid_from,
          validTo: r.row.valid_to >= OPEN_TIME ? Number.POSITIVE_INFINITY : r.row.valid_to,
          edges: out.map((e) => ({ to: e.to_id, type: e.type, weight: e.weight })),
          sourceCredibilities: r.credibilities,
        },
        filter,
      );
      if (!matches) continue;
      total++;
      if (hits.length >= limit) continue;
      hits.push({
        id: r.row.node_id,
        content: r.row.content,
        score: r.score.score,
        scoreBreakdown: r.score.breakdown,
        credibility: corroboration(r.credibilities),
        edges: out.map((e) => ({
          type: e.type,
          weight: e.weight,
          to: { id: e.to_id, content: core.nodes.visible(e.to_id, core.now(), core.now())?.content ?? '' },
        })),
        sources: r.sources.map((s, i) => ({
          name: s,
          effectiveCredibility: r.credibilities[i] ?? DEFAULT_SOURCE_CREDIBILITY,
        })),
      });
    }
    return { totalCount: total, nodes: hits };
  }
}
