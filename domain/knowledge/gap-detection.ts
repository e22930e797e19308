/**
 * Knowledge gap detection as pure rules over a snapshot of a namespace's live graph
 * (docs/adr/0035-knowledge-acquisition.md).
 *
 * Topics are node labels. The heuristics, in priority order:
 *
 * | kind | when | priority |
 * |---|---|---|
 * | `refuted` | the node was refuted at least once | 90 |
 * | `contradicted` | another live node makes the same claim (subject, predicate) with another value | 85 |
 * | `low_confidence` | confidence below `lowConfidenceThreshold` (0.4) | 60 + up to 20 by how far below |
 * | `stale` | marked stale, or its valid time began more than `staleAfterHours` (720) ago | 50 + up to 20 by age |
 * | `thin_topic` | a topic with fewer than `minTopicNodes` (3) live nodes | 40 + 10 per missing node (at most 70) |
 * | `isolated` | no edges and no topic shared with another live node | 20 |
 *
 * Gap ids are `<kind>:<node id or topic>`, so the same graph gives the same gaps in the same
 * order (priority descending, then id ascending).
 */

/** One live node as gap detection sees it. */
export interface GapNode {
  readonly id: string;
  readonly content: string;
  readonly labels: readonly string[];
  readonly confidence: number;
  /** Valid-time start, epoch milliseconds. */
  readonly validFrom: number;
  readonly claimKey: string | null;
  readonly claimValue: string | null;
  /** Edges in either direction to other live nodes. */
  readonly degree: number;
  readonly refutations: number;
  readonly staleMarks: number;
}

/** Kinds of gap, in priority order. */
export const GAP_KINDS = ['refuted', 'contradicted', 'low_confidence', 'stale', 'thin_topic', 'isolated'] as const;
export type GapKind = (typeof GAP_KINDS)[number];

/** Thresholds of the heuristics. */
export interface GapOptions {
  /** Detection time, epoch milliseconds. */
  readonly now: number;
  /** @default 0.4 */
  readonly lowConfidenceThreshold?: number;
  /** @default 720 (30 days) */
  readonly staleAfterHours?: number;
  /** A topic with fewer live nodes is thin. @default 3 */
  readonly minTopicNodes?: number;
  /** Most topics listed per gap. @default 3 */
  readonly topK?: number;
  /** Most gaps returned. @default 50 */
  readonly maxGaps?: number;
  /**
   * Keep only gaps sparser than this: `densityScore` below it (the origin's `min_gap_size`, a
   * sparsity threshold in (0, 1]). @default undefined (every gap)
   */
  readonly maxDensity?: number;
}

/** Defaults of {@link GapOptions}. */
export const DEFAULT_GAP_OPTIONS = {
  lowConfidenceThreshold: 0.4,
  staleAfterHours: 720,
  minTopicNodes: 3,
  topK: 3,
  maxGaps: 50,
} as const;

/** One detected gap. */
export interface KnowledgeGap {
  readonly id: string;
  readonly kind: GapKind;
  readonly priority: number;
  readonly description: string;
  readonly relatedNodeIds: readonly string[];
  readonly nearestTopics: readonly string[];
  /** How well covered the gap's neighbourhood is, in [0, 1] (live nodes sharing its topics / minTopicNodes, capped). */
  readonly densityScore: number;
  /** Seconds since the newest related node's valid time began (0 when none). */
  readonly temporalGapSeconds: number;
}

/** Gaps of a namespace with its coverage. */
export interface GapReport {
  readonly totalNodes: number;
  /** Share of live nodes not named by any gap, in [0, 1]; 0 for an empty namespace. */
  readonly coverageScore: number;
  /** Every gap found before `maxGaps` was applied. */
  readonly totalGaps: number;
  readonly gaps: readonly KnowledgeGap[];
}

const round = (x: number, digits = 4) => Math.round(x * 10 ** digits) / 10 ** digits;
const clip = (text: string, max = 120) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** Detects the gaps of a namespace snapshot. */
export function detectGaps(nodes: readonly GapNode[], options: GapOptions): GapReport {
  const o = { ...DEFAULT_GAP_OPTIONS, ...stripUndefined(options) };
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const topics = new Map<string, string[]>();
  for (const n of nodes) for (const l of new Set(n.labels)) topics.set(l, [...(topics.get(l) ?? []), n.id]);
  const topicSize = (t: string) => topics.get(t)?.length ?? 0;
  const claims = new Map<string, Set<string>>();
  for (const n of nodes) {
    if (n.claimKey === null) continue;
    const values = claims.get(n.claimKey) ?? new Set<string>();
    values.add(n.claimValue ?? '');
    claims.set(n.claimKey, values);
  }
  const nearest = (n: GapNode) =>
    [...new Set(n.labels)].sort((a, b) => topicSize(a) - topicSize(b) || a.localeCompare(b)).slice(0, o.topK);
  const density = (topicList: readonly string[]) => {
    const members = new Set(topicList.flatMap((t) => topics.get(t) ?? []));
    return round(Math.min(1, members.size / Math.max(1, o.minTopicNodes)));
  };
  const ageSeconds = (ids: readonly string[]) => {
    const newest = Math.max(...ids.map((id) => byId.get(id)?.validFrom ?? -Infinity));
    return Number.isFinite(newest) ? Math.max(0, Math.round((options.now - newest) / 1000)) : 0;
  };
  const gaps: KnowledgeGap[] = [];
  const nodeGap = (kind: GapKind, n: GapNode, priority: number, description: string) => {
    const nearestTopics = nearest(n);
    gaps.push({
      id: `${kind}:${n.id}`,
      kind,
      priority: Math.round(Math.min(100, priority)),
      description,
      relatedNodeIds: [n.id],
      nearestTopics,
      densityScore: density(nearestTopics),
      temporalGapSeconds: ageSeconds([n.id]),
    });
  };
  const staleMs = o.staleAfterHours * 3_600_000;
  for (const n of nodes) {
    const text = `"${clip(n.content)}"`;
    if (n.refutations > 0)
      nodeGap(
        'refuted',
        n,
        90,
        `${text} was refuted ${n.refutations} time${n.refutations === 1 ? '' : 's'}; find evidence that settles it`,
      );
    if (n.claimKey !== null && (claims.get(n.claimKey)?.size ?? 0) > 1)
      nodeGap(
        'contradicted',
        n,
        85,
        `${text} contradicts ${(claims.get(n.claimKey)?.size ?? 1) - 1} other value(s) of the same claim`,
      );
    if (n.confidence < o.lowConfidenceThreshold) {
      nodeGap(
        'low_confidence',
        n,
        60 + 20 * ((o.lowConfidenceThreshold - n.confidence) / o.lowConfidenceThreshold),
        `${text} has confidence ${round(n.confidence, 3)}, below ${o.lowConfidenceThreshold}`,
      );
    }
    const age = options.now - n.validFrom;
    if (n.staleMarks > 0 || age > staleMs) {
      const why =
        n.staleMarks > 0
          ? `was marked stale ${n.staleMarks} time${n.staleMarks === 1 ? '' : 's'}`
          : `is ${Math.floor(age / 3_600_000)} hours old (more than ${o.staleAfterHours})`;
      nodeGap(
        'stale',
        n,
        50 + 20 * Math.min(1, Math.max(0, age) / Math.max(1, staleMs * 4)),
        `${text} ${why}; refresh it`,
      );
    }
    if (n.degree === 0 && n.labels.every((l) => topicSize(l) <= 1))
      nodeGap('isolated', n, 20, `${text} has no edges and shares no topic with another node`);
  }
  for (const [topic, ids] of topics) {
    if (ids.length >= o.minTopicNodes) continue;
    const sorted = [...ids].sort();
    gaps.push({
      id: `thin_topic:${topic}`,
      kind: 'thin_topic',
      priority: Math.min(70, 40 + 10 * (o.minTopicNodes - ids.length)),
      description: `topic "${clip(topic, 64)}" has ${ids.length} node${ids.length === 1 ? '' : 's'}, fewer than ${o.minTopicNodes}`,
      relatedNodeIds: sorted,
      nearestTopics: [topic],
      densityScore: density([topic]),
      temporalGapSeconds: ageSeconds(sorted),
    });
  }
  gaps.sort(compareGaps);
  const named = new Set(gaps.flatMap((g) => g.relatedNodeIds));
  const kept = options.maxDensity === undefined ? gaps : gaps.filter((g) => g.densityScore < options.maxDensity!);
  return {
    totalNodes: nodes.length,
    coverageScore: nodes.length === 0 ? 0 : round(1 - named.size / nodes.length),
    totalGaps: kept.length,
    gaps: kept.slice(0, o.maxGaps),
  };
}

/** Priority descending, then id ascending. */
export function compareGaps(a: KnowledgeGap, b: KnowledgeGap): number {
  return b.priority - a.priority || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
