/**
 * Knowledge gaps of a namespace: reads a snapshot of the live graph (versions valid now, open
 * edges, feedback counters) and applies the pure gap rules (docs/adr/0035-knowledge-acquisition.md).
 */
import {
  detectGaps,
  type GapNode,
  type GapOptions,
  type GapReport,
  type KnowledgeGap,
} from '../../domain/knowledge/gap-detection.js';
import { AcquisitionStore } from '../../store/knowledge/acquisition-store.js';
import type { KnowledgeState, Namespace } from '../core/knowledge-state.js';

/** Caller-tunable thresholds of gap detection (the detection time is the store's now). */
export type GapRequestOptions = Omit<GapOptions, 'now'>;

/** REST (snake_case) form of a gap. */
export function gapView(g: KnowledgeGap) {
  return {
    id: g.id,
    kind: g.kind,
    priority: g.priority,
    description: g.description,
    related_node_ids: g.relatedNodeIds,
    nearest_topics: g.nearestTopics,
    density_score: g.densityScore,
    temporal_gap_seconds: g.temporalGapSeconds,
  };
}

/** Detects knowledge gaps. */
export class GapService {
  readonly #core: KnowledgeState;
  readonly #store: AcquisitionStore;

  constructor(core: KnowledgeState) {
    this.#core = core;
    this.#store = new AcquisitionStore(core.db);
  }

  /** The gap report of a namespace object, at the store's now. */
  detect(ns: Namespace, options: GapRequestOptions = {}): GapReport {
    const now = this.#core.now();
    const versions = this.#store.liveVersions(ns.id, now);
    const live = new Set(versions.map((v) => v.node_id));
    const degree = new Map<string, number>();
    for (const e of this.#store.edges(ns.id)) {
      if (!live.has(e.from_id) || !live.has(e.to_id) || e.from_id === e.to_id) continue;
      degree.set(e.from_id, (degree.get(e.from_id) ?? 0) + 1);
      degree.set(e.to_id, (degree.get(e.to_id) ?? 0) + 1);
    }
    const feedback = new Map(this.#store.feedbackCounts(ns.id).map((f) => [f.node_id, f]));
    const seen = new Set<string>();
    const nodes: GapNode[] = [];
    for (const v of versions) {
      if (seen.has(v.node_id)) continue;
      seen.add(v.node_id);
      nodes.push({
        id: v.node_id,
        content: v.content,
        labels: JSON.parse(v.labels) as string[],
        confidence: v.confidence,
        validFrom: v.valid_from,
        claimKey: v.claim_key,
        claimValue: v.claim_value,
        degree: degree.get(v.node_id) ?? 0,
        refutations: feedback.get(v.node_id)?.refutations ?? 0,
        staleMarks: feedback.get(v.node_id)?.stale ?? 0,
      });
    }
    return detectGaps(nodes, { ...options, now });
  }

  /** `POST /gaps`: the report in REST form. */
  gaps(tenant: string, nsName: string, options: GapRequestOptions = {}) {
    const ns = this.#core.namespace(tenant, nsName);
    const report = this.detect(ns, options);
    return {
      namespace: ns.name,
      coverage_score: report.coverageScore,
      total_nodes: report.totalNodes,
      total_gaps: report.totalGaps,
      gaps: report.gaps.map(gapView),
    };
  }
}
