/**
 * The retrieval path: vector, multi-vector, lexical and graph candidates under the same filters,
 * fused by Reciprocal Rank Fusion, optionally reranked, scored by four weighted components
 * (docs/adr/0022, 0023).
 */
import { isDomainError, ValidationError } from '../../domain/errors.js';
import {
  DEFAULT_SOURCE_CREDIBILITY,
  DEFAULT_WEIGHTS,
  type MemType,
  defaultCandidateK,
  type NamespaceMode,
  type ScoreWeights,
} from '../../domain/knowledge/modes.js';
import {
  confidenceScore,
  mergeWeights,
  recencyScore,
  scoreCandidate,
  clamp01,
} from '../../domain/knowledge/retrieval/scoring.js';
import { fuseLists, fusionWeights, type PathList } from '../../domain/knowledge/retrieval/fusion.js';
import { normalize } from '../../domain/knowledge/retrieval/vector-math.js';
import type { VersionRow } from '../../store/knowledge/rows.js';
import type { KnowledgeState, Namespace } from '../core/knowledge-state.js';
import { checkVector } from '../write/write-service.js';
import { labelsOf } from '../core/node-view.js';
import { resultItem, type RankedNode, type RerankOutcome, type RetrieveResults } from './retrieve-answer.js';
import { parseTime } from '../core/time.js';
import { TermStatistics, type StatisticsView } from './term-statistics.js';
import { LexicalPath } from './lexical-path.js';
import type { LexicalTuning } from '../../domain/knowledge/retrieval/lexical-tuning.js';

export type { RankedNode } from './retrieve-answer.js';

/** The REST retrieve request. */
export interface RetrieveRequest {
  readonly vector?: readonly number[];
  readonly vectors?: readonly (readonly number[])[];
  readonly text?: string;
  readonly seed_ids?: readonly string[];
  readonly top_k?: number;
  readonly candidate_k?: number;
  readonly rerank_k?: number;
  readonly labels?: readonly string[];
  readonly score_params?: {
    readonly similarity_weight?: number;
    readonly confidence_weight?: number;
    readonly recency_weight?: number;
    readonly utility_weight?: number;
    /** Per-request recency decay rate α per hour; overrides the memory type's rate when positive. */
    readonly decay_alpha?: number;
  };
  readonly as_of?: string;
  readonly valid_at?: string;
  readonly known_at?: string;
  readonly include_source_ids?: readonly string[];
  readonly exclude_source_ids?: readonly string[];
  /** Extension: keep retracted versions (default false: the retraction filter drops them). */
  readonly include_retracted?: boolean;
}

/** Per-request anchors and filters: the rows it may see (docs/adr/0224). */
interface Scope extends StatisticsView {
  readonly ns: Namespace;
  readonly liveOnly: boolean;
}

const MAX_EXPANSION = 20_000;

/** Retrieves and ranks nodes. */
export class RetrieveService {
  readonly #core: KnowledgeState;
  readonly #lexical: LexicalPath;
  readonly #stats: TermStatistics;

  /** `tuning` overrides the lexical ranker's defaults (evaluations only: bench/retrieval-quality.ts). */
  constructor(core: KnowledgeState, tuning: Partial<LexicalTuning> = {}) {
    this.#core = core;
    this.#stats = new TermStatistics(core.views, () => core.now());
    this.#lexical = new LexicalPath(core.thesaurus, tuning);
  }

  /** `POST /retrieve`: the REST result list. */
  async retrieve(tenant: string, nsName: string, request: RetrieveRequest): Promise<RetrieveResults> {
    const ns = this.#core.namespace(tenant, nsName);
    let rerank: RerankOutcome | undefined;
    const ranked = await this.rank(ns, request, undefined, (outcome) => (rerank = outcome));
    return {
      results: ranked.map((r) => resultItem(r, ns.name)),
      ...(rerank
        ? { rerank: { ...rerank, ...(this.#core.reranker?.model ? { model: this.#core.reranker.model } : {}) } }
        : {}),
    };
  }

  /** Ranks candidates for `request` in `ns`; `mode` overrides the namespace's default weights. */
  async rank(
    ns: Namespace,
    request: RetrieveRequest,
    mode?: NamespaceMode,
    outcome?: (rerank: RerankOutcome) => void,
  ): Promise<RankedNode[]> {
    const core = this.#core;
    const hasQuery =
      request.vector !== undefined ||
      (request.vectors?.length ?? 0) > 0 ||
      (request.text !== undefined && request.text.trim() !== '') ||
      (request.seed_ids?.length ?? 0) > 0;
    if (!hasQuery)
      throw new ValidationError('retrieve needs vector, vectors, text or seed_ids', { code: 'invalid_request' });
    const now = core.now();
    const validAt = parseTime('valid_at', request.valid_at) ?? parseTime('as_of', request.as_of) ?? now;
    const knownAt = parseTime('known_at', request.known_at) ?? now;
    const includeRetracted = request.include_retracted === true;
    const scope: Scope = {
      ns,
      nsId: ns.id,
      validAt,
      knownAt,
      validAtIsNow: request.valid_at === undefined && request.as_of === undefined,
      knownAtIsNow: request.known_at === undefined,
      liveOnly: request.known_at === undefined && !includeRetracted,
      includeRetracted,
      labels: request.labels ?? [],
      include:
        request.include_source_ids && request.include_source_ids.length > 0
          ? new Set(request.include_source_ids)
          : undefined,
      exclude: new Set(request.exclude_source_ids ?? []),
    };
    const topK = request.top_k ?? 10;
    const candidateK = request.candidate_k ?? defaultCandidateK(topK);
    const rows = new Map<number, Candidate>();
    const lists: PathList[] = [];

    const queryVectors: { path: string; vector: Float32Array }[] = [];
    if (request.vector) queryVectors.push({ path: 'vector', vector: checkVector(request.vector) });
    (request.vectors ?? []).forEach((v, i) =>
      queryVectors.push({ path: 'vectors', vector: checkVector(v, `vectors[${i}]`) }),
    );
    let coverage: number | undefined;
    if (request.text !== undefined && request.text.trim() !== '') {
      const text = this.#textPath(scope, request.text, candidateK, rows);
      lists.push(text.list);
      coverage = text.coverage;
      if (core.embedder) {
        const [embedded] = await core.embedder.embed([request.text]);
        if (embedded) queryVectors.push({ path: 'vector', vector: checkVector(Array.from(embedded), 'embedded text') });
      }
    }
    // With text, the hybrid weights follow how well the text path covered the query (docs/adr/0180).
    const hybrid = coverage === undefined ? undefined : fusionWeights(coverage);
    if (hybrid) lists[0] = { ...lists[0]!, weight: hybrid.text };
    for (const q of queryVectors)
      lists.push({
        ...this.#vectorPath(scope, q.path, q.vector, candidateK, rows),
        ...(hybrid ? { weight: hybrid.vector } : {}),
      });
    if (request.seed_ids && request.seed_ids.length > 0)
      lists.push(this.#graphPath(scope, request.seed_ids, candidateK, rows));

    const fused = fuseLists(lists);
    const similarity = new Map(fused.map((f) => [f.key, f.similarity]));
    const rerankK = request.rerank_k ?? fused.length;
    if (core.reranker && rerankK > 0 && fused.length > 0) {
      const pool = fused.slice(0, rerankK);
      try {
        const scores = await core.reranker.rerank(
          request.text,
          pool.map((f) => ({
            id: rows.get(Number(f.key))!.row.node_id,
            content: rows.get(Number(f.key))!.row.content,
          })),
        );
        if (scores !== undefined) {
          pool.forEach((f, i) => similarity.set(f.key, clamp01(scores[i] ?? 0)));
          outcome?.({ applied: true, candidates: pool.length });
        } else {
          outcome?.({ applied: false, candidates: 0, reason: 'no query text to rerank against' });
        }
      } catch (error) {
        // A reranker that fails must not fail retrieval: the fused similarity stands, and the answer says so.
        outcome?.({
          applied: false,
          candidates: 0,
          reason: error instanceof Error ? error.message : String(error),
          ...(isDomainError(error) ? { code: error.code } : {}),
        });
      }
    }
    this.#loadSources(
      fused.map((f) => Number(f.key)),
      rows,
    );
    const weights = weightsFor(mode ?? ns.mode, request.score_params);
    const credibility = this.#credibilityLookup(ns.id, scope.knownAtIsNow ? undefined : knownAt);
    const ranked: RankedNode[] = fused.map((f) => {
      const { row, sources } = rows.get(Number(f.key))!;
      const kept = sources!.filter((s) => !scope.exclude.has(s));
      const credibilities = kept.map(credibility);
      const score = scoreCandidate(
        {
          similarity: similarity.get(f.key) ?? 0,
          confidence: confidenceScore(row.confidence, credibilities),
          recency: recencyScore(
            validAt - row.valid_from,
            row.mem_type as MemType | null,
            request.score_params?.decay_alpha,
          ),
          utility: row.utility,
        },
        weights,
      );
      return { row, sources: kept, credibilities, score, paths: f.paths };
    });
    ranked.sort((a, b) => b.score.score - a.score.score || a.row.vid - b.row.vid);
    return this.#collapse(ranked, topK);
  }

  /**
   * Keeps the best version of each node, up to `topK`. Distinct nodes are never dropped, however
   * similar: duplicates are handled at write time by fingerprint dedup (docs/adr/0022).
   */
  #collapse(ranked: readonly RankedNode[], topK: number): RankedNode[] {
    const kept: RankedNode[] = [];
    const nodes = new Set<string>();
    for (const r of ranked) {
      if (kept.length >= topK) break;
      if (nodes.has(r.row.node_id)) continue;
      nodes.add(r.row.node_id);
      kept.push(r);
    }
    return kept;
  }

  /** Each source's credibility, as it was at `knownAt` when the request reads as of a time. */
  #credibilityLookup(nsId: number, knownAt: number | undefined): (source: string) => number {
    const cache = new Map<string, number>();
    return (source) => {
      let c = cache.get(source);
      if (c === undefined) {
        c =
          knownAt === undefined
            ? this.#core.credibility(nsId, source, DEFAULT_SOURCE_CREDIBILITY)
            : this.#core.credibilityAt(nsId, source, knownAt, DEFAULT_SOURCE_CREDIBILITY);
        cache.set(source, c);
      }
      return c;
    };
  }

  /** Loads rows and applies label, source, visibility and retraction filters; returns accepted vids. */
  #accept(scope: Scope, vids: readonly number[], rows: Map<number, Candidate>): Set<number> {
    const missing = vids.filter((v) => !rows.has(v));
    for (const row of this.#core.nodes.versions(missing)) rows.set(row.vid, { row, sources: undefined });
    // Without source filters a version's sources decide nothing here: every version the view sees
    // unretracted has one (docs/adr/0224). They are read for the fused candidates alone.
    if (scope.include !== undefined || scope.exclude.size > 0) this.#loadSources(missing, rows);
    const ok = new Set<number>();
    for (const vid of vids) {
      const entry = rows.get(vid);
      if (entry && passes(scope, entry.row, entry.sources)) ok.add(vid);
    }
    return ok;
  }

  /** Reads the supporting sources of the candidates among `vids` that have none read yet. */
  #loadSources(vids: readonly number[], rows: Map<number, Candidate>): void {
    const missing = vids.filter((v) => rows.get(v)?.sources === undefined);
    if (missing.length === 0) return;
    const support = this.#core.nodes.supportMany(missing);
    for (const vid of missing) {
      const entry = rows.get(vid);
      if (entry) entry.sources = (support.get(vid) ?? []).sort();
    }
  }

  #vectorPath(
    scope: Scope,
    path: string,
    query: Float32Array,
    candidateK: number,
    rows: Map<number, Candidate>,
  ): PathList {
    const unit = normalize(query)!;
    const filter = {
      nsId: scope.ns.id,
      validAt: scope.validAt,
      knownAt: scope.knownAt,
      includeRetracted: scope.includeRetracted,
    };
    let k = candidateK;
    for (;;) {
      const hits = this.#core.index.search(unit, k, filter);
      const ok = this.#accept(
        scope,
        hits.map((h) => h.vid),
        rows,
      );
      const items = hits
        .filter((h) => ok.has(h.vid))
        .map((h) => ({ key: String(h.vid), similarity: clamp01(h.cosine) }));
      if (items.length >= candidateK || hits.length < k || k >= MAX_EXPANSION)
        return { path, items: items.slice(0, candidateK) };
      k = Math.min(k * 4, MAX_EXPANSION);
    }
  }

  #textPath(
    scope: Scope,
    text: string,
    candidateK: number,
    rows: Map<number, Candidate>,
  ): { list: PathList; coverage: number } {
    const nodes = this.#core.nodes;
    const { items, coverage } = this.#lexical.search(
      text,
      { candidateK },
      {
        stats: this.#stats.of(scope),
        search: (match, cap, order) =>
          order === 'rank'
            ? nodes.textSearchRanked(match, { nsId: scope.ns.id, liveOnly: scope.liveOnly }, cap)
            : nodes.textSearch(match, { nsId: scope.ns.id, liveOnly: scope.liveOnly }, cap),
        accept: (vids) => {
          const ok = this.#accept(scope, vids, rows);
          return vids.filter((v) => ok.has(v));
        },
        content: (vid) => rows.get(vid)!.row.content,
        neighbours: (vid, reach) => this.#core.views.neighbours(scope, vid, reach),
      },
    );
    return { list: { path: 'text', items }, coverage };
  }

  /**
   * Walks edges (both directions, two hops) from the seeds; similarity is the product of edge
   * weights, halved per extra hop. The walk starts from, and passes through, only nodes the request
   * may see (docs/adr/0224).
   */
  #graphPath(scope: Scope, seeds: readonly string[], candidateK: number, rows: Map<number, Candidate>): PathList {
    const core = this.#core;
    const seen = new Map<string, number | undefined>();
    const visibleVid = (id: string): number | undefined => {
      if (seen.has(id)) return seen.get(id);
      const row = core.nodes.visible(id, scope.validAt, scope.knownAt);
      const vid = row && this.#accept(scope, [row.vid], rows).has(row.vid) ? row.vid : undefined;
      seen.set(id, vid);
      return vid;
    };
    const strength = new Map<string, number>();
    const seedSet = new Set(seeds.map((s) => s.toLowerCase()));
    let frontier = [...seedSet].filter((id) => visibleVid(id) !== undefined).map((id) => ({ id, strength: 1 }));
    for (let hop = 1; hop <= 2 && frontier.length > 0; hop++) {
      const next: { id: string; strength: number }[] = [];
      for (const from of frontier) {
        for (const edge of core.edges.touching(from.id, scope.knownAt)) {
          if (edge.ns_id !== scope.ns.id) continue;
          const other = edge.from_id === from.id ? edge.to_id : edge.from_id;
          if (seedSet.has(other)) continue;
          const s = from.strength * clamp01(edge.weight) * (hop === 1 ? 1 : 0.5);
          if (s > (strength.get(other) ?? 0) && visibleVid(other) !== undefined) {
            strength.set(other, s);
            next.push({ id: other, strength: s });
          }
        }
      }
      frontier = next;
    }
    const items = [...strength]
      .map(([id, s]) => ({ key: String(visibleVid(id)!), similarity: s }))
      .sort((a, b) => b.similarity - a.similarity || Number(a.key) - Number(b.key))
      .slice(0, candidateK);
    return { path: 'graph', items };
  }
}

/** A loaded candidate version; its sources once read ({@link RetrieveService.#loadSources}). */
interface Candidate {
  readonly row: VersionRow;
  sources: string[] | undefined;
}

/** Whether a version passes the request's filters; `sources` undefined: the request has no source filters. */
function passes(scope: Scope, row: VersionRow, sources: readonly string[] | undefined): boolean {
  if (row.ns_id !== scope.ns.id) return false;
  if (!(row.valid_from <= scope.validAt && scope.validAt < row.valid_to)) return false;
  if (!(row.tx_from <= scope.knownAt && scope.knownAt < row.tx_to)) return false;
  if (row.retracted === 1 && !scope.includeRetracted) return false;
  if (scope.labels.length > 0) {
    const labels = labelsOf(row);
    if (!scope.labels.every((l) => labels.includes(l))) return false;
  }
  if (sources === undefined) return true;
  const kept = sources.filter((s) => !scope.exclude.has(s));
  if (kept.length === 0 && !(row.retracted === 1 && scope.includeRetracted)) return false;
  if (scope.include && !kept.some((s) => scope.include!.has(s))) return false;
  return true;
}

/** Mode defaults overridden by `score_params`. */
export function weightsFor(mode: NamespaceMode, params: RetrieveRequest['score_params']): ScoreWeights {
  return mergeWeights(DEFAULT_WEIGHTS[mode], {
    ...(params?.similarity_weight !== undefined ? { similarity: params.similarity_weight } : {}),
    ...(params?.confidence_weight !== undefined ? { confidence: params.confidence_weight } : {}),
    ...(params?.recency_weight !== undefined ? { recency: params.recency_weight } : {}),
    ...(params?.utility_weight !== undefined ? { utility: params.utility_weight } : {}),
  });
}
