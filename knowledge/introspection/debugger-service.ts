/**
 * The admin debugger's reads (the origin's `/admin/api/timetravel`, `/diff`, `/search`, `/belief`):
 * what a namespace looked like at a time, what changed between two times, a scan of recent valid
 * nodes by text, labels, source id or node id, and the evidence trail of one claim
 * (docs/adr/0038-admin-debugger-api.md).
 */
import { NotFoundError, ValidationError } from '../../domain/errors.js';
import { DEFAULT_SOURCE_CREDIBILITY } from '../../domain/knowledge/modes.js';
import { corroboration } from '../../domain/knowledge/retrieval/scoring.js';
import { DebuggerStore } from '../../store/knowledge/debugger-store.js';
import type { VersionRow } from '../../store/knowledge/rows.js';
import type { KnowledgeState } from '../core/knowledge-state.js';
import { labelsOf, nodeView } from '../core/node-view.js';
import { isoTime } from '../core/time.js';

/** Most nodes a time-travel answer lists. */
export const TIMETRAVEL_LIMIT = 1000;
/** Most changes a diff answer lists. */
export const DIFF_LIMIT = 1000;
/** Default and largest debugger search answer. */
export const SEARCH_LIMIT = { default: 10, max: 50 } as const;
/** Recent valid nodes a debugger search scans. */
const SEARCH_SCAN = 5000;

/** Edge types read as support and contradiction in a belief audit. */
const SUPPORTS = new Set(['supports', 'support', 'corroborates']);
const CONTRADICTS = new Set(['contradicts', 'contradiction', 'refutes']);

/** Parses the debugger's times: ISO 8601 with a zone, or a date `YYYY-MM-DD` (midnight UTC). */
export function parseDebuggerTime(field: string, value: string | undefined): number {
  if (value === undefined || value.trim() === '')
    throw new ValidationError(`${field}: is required`, { code: 'invalid_request', details: { field } });
  const text = /^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value;
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(text)
    ? Date.parse(text)
    : Number.NaN;
  if (!Number.isFinite(ms))
    throw new ValidationError(`${field}: "${value.slice(0, 64)}" is not RFC 3339 or YYYY-MM-DD`, {
      code: 'invalid_request',
      details: { field },
    });
  return ms;
}

/** Admin debugger reads over one tenant's namespaces. */
export class DebuggerService {
  readonly #core: KnowledgeState;
  readonly #store: DebuggerStore;

  constructor(core: KnowledgeState) {
    this.#core = core;
    this.#store = new DebuggerStore(core.db);
  }

  #view(row: VersionRow, namespace: string) {
    return nodeView(row, namespace, this.#core.nodes.support(row.vid));
  }

  /** Nodes valid at `asOf` as known now, optionally having all `labels`. */
  timeTravel(tenant: string, nsName: string, asOf: number, labels: readonly string[]) {
    const ns = this.#core.namespace(tenant, nsName);
    const rows = this.#store
      .validAt(ns.id, asOf, this.#core.now(), TIMETRAVEL_LIMIT * 4)
      .filter((r) => labels.every((l) => labelsOf(r).includes(l)))
      .slice(0, TIMETRAVEL_LIMIT);
    return {
      namespace: ns.name,
      as_of: isoTime(asOf),
      count: rows.length,
      nodes: rows.map((r) => this.#view(r, ns.name)),
    };
  }

  /** Versions recorded between `from` (exclusive) and `to` (inclusive), oldest first. */
  diff(tenant: string, nsName: string, from: number, to: number) {
    const ns = this.#core.namespace(tenant, nsName);
    if (to < from) throw new ValidationError('to: must not be before from', { code: 'invalid_request' });
    const rows = this.#store.changedBetween(ns.id, from, to, DIFF_LIMIT);
    return {
      namespace: ns.name,
      from: isoTime(from),
      to: isoTime(to),
      count: rows.length,
      changes: rows.map((r) => ({
        node_id: r.node_id,
        version: r.version,
        change: r.change,
        tx_time: isoTime(r.tx_from),
        node: this.#view(r, ns.name),
      })),
    };
  }

  /** Recent valid nodes whose text, source ids, labels or id contain `query` (case-insensitive). */
  search(tenant: string, nsName: string, query: string | undefined, labels: readonly string[], limit: number) {
    const ns = this.#core.namespace(tenant, nsName);
    const now = this.#core.now();
    const needle = query?.trim().toLowerCase() ?? '';
    const results = [];
    for (const row of this.#store.validAt(ns.id, now, now, SEARCH_SCAN)) {
      if (results.length >= limit) break;
      const rowLabels = labelsOf(row);
      if (!labels.every((l) => rowLabels.includes(l))) continue;
      const sources = this.#core.nodes.support(row.vid);
      const reason =
        needle === ''
          ? 'recent'
          : row.content.toLowerCase().includes(needle)
            ? 'text'
            : sources.some((s) => s.toLowerCase().includes(needle))
              ? 'source'
              : rowLabels.some((l) => l.toLowerCase().includes(needle))
                ? 'label'
                : row.node_id.includes(needle)
                  ? 'id'
                  : undefined;
      if (reason === undefined) continue;
      results.push({
        id: row.node_id,
        labels: rowLabels,
        text: row.content,
        source_id: sources[0] ?? null,
        source_ids: sources,
        confidence: row.confidence,
        version: row.version,
        valid_from: isoTime(row.valid_from),
        match_reason: reason,
      });
    }
    return { namespace: ns.name, query: query?.trim() ?? '', count: results.length, results };
  }

  /** The evidence trail of one claim: its source, supporters, contradictors, history and graph context. */
  belief(tenant: string, nsName: string, nodeId: string) {
    const core = this.#core;
    const ns = core.namespace(tenant, nsName);
    const now = core.now();
    const id = nodeId.toLowerCase();
    const node = /^[0-9a-f-]{36}$/.test(id) ? core.nodes.node(id) : undefined;
    const history = node && node.ns_id === ns.id ? core.nodes.history(node.id) : [];
    const current = node
      ? (core.nodes.visible(node.id, now, now) ?? history.filter((h) => h.tx_to > now).at(-1) ?? history.at(-1))
      : undefined;
    if (!node || node.ns_id !== ns.id || !current)
      throw new NotFoundError(`node ${nodeId.slice(0, 64)} does not exist in namespace "${ns.name}"`, {
        code: 'node_not_found',
      });
    const sources = core.nodes.support(current.vid);
    const sourceRows = sources.map((s) => ({ id: s, row: core.sources.get(ns.id, s) }));
    const credibilities = sourceRows.map((s) => s.row?.credibility ?? DEFAULT_SOURCE_CREDIBILITY);
    const asserting = history[0] ? (core.nodes.support(history[0].vid)[0] ?? sources[0]) : sources[0];
    const context = core.edges.touching(current.node_id, now).map((e) => {
      const outgoing = e.from_id === current.node_id;
      const otherId = outgoing ? e.to_id : e.from_id;
      const other = core.nodes.visible(otherId, now, now);
      const relation = SUPPORTS.has(e.type)
        ? outgoing
          ? 'supports'
          : 'supported by'
        : CONTRADICTS.has(e.type)
          ? outgoing
            ? 'contradicts'
            : 'contradicted by'
          : outgoing
            ? 'links to'
            : 'linked from';
      return {
        node_id: otherId,
        text: other?.content ?? null,
        source_id: other ? (core.nodes.support(other.vid)[0] ?? null) : null,
        labels: other ? labelsOf(other) : [],
        relation,
        direction: outgoing ? 'outgoing' : 'incoming',
        edge_id: e.id,
        edge_type: e.type,
        edge_weight: e.weight,
        confidence: other?.confidence ?? null,
        valid_from: other ? isoTime(other.valid_from) : null,
      };
    });
    const claimConflicts =
      current.claim_key === null
        ? []
        : core.nodes
            .byClaim(ns.id, current.claim_key, now)
            .filter((v) => v.node_id !== current.node_id && v.claim_value !== current.claim_value && v.retracted === 0);
    const contradictionPaths = [
      ...context
        .filter((c) => c.relation.startsWith('contradict'))
        .map((c) => ({
          kind: 'edge',
          other_node_id: c.node_id,
          other_text: c.text,
          edge_id: c.edge_id,
          edge_weight: c.edge_weight,
          direction: c.direction,
          confidence_gap: Math.abs(current.confidence - (c.confidence ?? 0)),
        })),
      ...claimConflicts.map((v) => ({
        kind: 'claim',
        other_node_id: v.node_id,
        other_text: v.content,
        edge_id: null,
        edge_weight: null,
        direction: null,
        confidence_gap: Math.abs(current.confidence - v.confidence),
      })),
    ];
    const trust =
      asserting === undefined
        ? []
        : core.sources.trust(ns.id, asserting).map((t) => ({
            time: isoTime(t.tx_time),
            source_id: asserting,
            node_id: t.node_id,
            action: t.action,
            source_credibility: t.credibility,
            previous_credibility: t.previous,
            reason: t.reason,
          }));
    const supporters = context.filter((c) => c.relation === 'supported by' || c.relation === 'supports');
    const confidenceTimeline = history.map((h) => ({
      time: isoTime(h.tx_from),
      version: h.version,
      confidence: h.confidence,
      utility: h.utility,
      change: h.change,
    }));
    return {
      node: nodeView(current, ns.name, sources),
      source: {
        id: asserting ?? null,
        sources: sourceRows.map((s, i) => ({
          source_id: s.id,
          labels: s.row ? (JSON.parse(s.row.labels) as string[]) : [],
          credibility: credibilities[i],
        })),
        compound_credibility: corroboration(credibilities),
      },
      supporters,
      contradictors: contradictionPaths,
      confidence_history: confidenceTimeline,
      source_trust_timeline: trust,
      graph_context: context,
      counts: {
        supporters: supporters.length,
        contradictors: contradictionPaths.length,
        graph_neighbors: context.length,
        source_trust_points: trust.length,
        confidence_versions: confidenceTimeline.length,
      },
      audited_at: isoTime(now),
    };
  }
}
