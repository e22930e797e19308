/**
 * Node reads at any valid and transaction time, per-source retraction and edge creation.
 */
import { NotFoundError, ValidationError, ConflictError, isCallerError, UnavailableError } from '../../domain/errors.js';
import { OPEN_TIME, type IntentRow } from '../../store/knowledge/rows.js';
import type { KnowledgeState, Namespace } from '../core/knowledge-state.js';
import type { WriteService, ApplyOutcome } from './write-service.js';
import { edgeView, nodeView, type NodeDetail } from '../core/node-view.js';
import { parseTime } from '../core/time.js';

/** Body of `POST /nodes/{id}/retract-source`. */
export interface RetractRequest {
  readonly source_id: string;
  readonly reason: string;
  readonly effective_at?: string;
}

/** What a retract intent stores. */
export interface RetractIntentPayload {
  readonly nodeId: string;
  readonly request: RetractRequest;
  readonly effectiveAt: number;
}

/** Body of `POST /nodes/{id}/edges`. */
export interface EdgeRequest {
  readonly to: string;
  readonly type: string;
  readonly weight?: number;
}

/** Reads and changes single nodes. */
export class NodeService {
  readonly #core: KnowledgeState;
  readonly #writes: WriteService;

  constructor(core: KnowledgeState, writes: WriteService) {
    this.#core = core;
    this.#writes = writes;
  }

  #nodeIn(ns: Namespace, id: string) {
    return this.#core.nodeIn(ns, id);
  }

  /**
   * The node version visible at `valid_at` (default now) as known at `known_at` (default now), its
   * outgoing edges, and with `history` every version row.
   */
  get(
    tenant: string,
    nsName: string,
    id: string,
    query: { valid_at?: string; known_at?: string; history?: boolean } = {},
  ): NodeDetail {
    const core = this.#core;
    const ns = core.namespace(tenant, nsName);
    const node = this.#nodeIn(ns, id);
    const now = core.now();
    const valid = parseTime('valid_at', query.valid_at) ?? now;
    const known = parseTime('known_at', query.known_at) ?? now;
    const row = core.nodes.visible(node.id, valid, known);
    if (!row) {
      throw new NotFoundError(
        `node ${id} has no version valid at ${new Date(valid).toISOString()} as known at ${new Date(known).toISOString()}`,
        { code: 'node_not_visible' },
      );
    }
    const view: NodeDetail = {
      ...nodeView(row, ns.name, core.nodes.support(row.vid)),
      edges: core.edges.outgoing(node.id, known).map(edgeView),
    };
    if (!query.history) return view;
    const rows = core.nodes.history(node.id);
    const support = core.nodes.supportMany(rows.map((r) => r.vid));
    return { ...view, history: rows.map((r) => nodeView(r, ns.name, support.get(r.vid) ?? [])) };
  }

  /**
   * Removes a source's support from a node from `effective_at` on. Each current version the
   * source supports is closed in transaction time and replaced by its part before `effective_at`
   * (unchanged) and its part after (without the source; retracted when no supporter remains).
   */
  async retractSource(tenant: string, nsName: string, id: string, request: RetractRequest): Promise<void> {
    const core = this.#core;
    const ns = core.namespace(tenant, nsName);
    const node = this.#nodeIn(ns, id);
    const effectiveAt = parseTime('effective_at', request.effective_at) ?? core.now();
    const supported = core.nodes
      .current(node.id)
      .some((v) => v.valid_to > effectiveAt && core.nodes.support(v.vid).includes(request.source_id));
    if (!supported) {
      throw new NotFoundError(
        `source "${request.source_id}" does not support node ${node.id} at or after ${new Date(effectiveAt).toISOString()}`,
        { code: 'support_not_found' },
      );
    }
    const intent: IntentRow = {
      id: core.newId(),
      ns_id: ns.id,
      kind: 'retract_source',
      node_id: node.id,
      request_id: null,
      payload: JSON.stringify({ nodeId: node.id, request, effectiveAt } satisfies RetractIntentPayload),
      created_at: core.nextTx(),
      attempts: 0,
      last_error: null,
    };
    core.intents.insert(intent);
    try {
      this.applyRetract(ns, intent, false);
    } catch (error) {
      if (isCallerError(error)) {
        core.intents.remove(intent.id);
        throw error;
      }
      core.intents.recordFailure(intent.id, error instanceof Error ? error.message : String(error));
      throw new UnavailableError(
        'the retraction did not complete; it is recorded as a pending intent: inspect GET /recovery/pending and reconcile',
        {
          code: 'write_pending',
          details: { pending_intent_id: intent.id },
          cause: error,
        },
      );
    }
  }

  /** Applies a retract intent; with `replay`, changes to the node after the intent are a conflict. */
  applyRetract(ns: Namespace, intent: IntentRow, replay: boolean): ApplyOutcome {
    const core = this.#core;
    const payload = JSON.parse(intent.payload) as RetractIntentPayload;
    const indexOps: (() => void)[] = [];
    const outcome = core.nodes.transaction((): ApplyOutcome => {
      if (replay && !core.intents.get(intent.id)) return { kind: 'already_applied', nodeId: payload.nodeId };
      const current = core.nodes.current(payload.nodeId);
      if (replay && current.some((v) => v.tx_from > intent.created_at)) {
        return {
          kind: 'conflict',
          reason: `node ${payload.nodeId} changed after this intent was recorded`,
          nodeId: payload.nodeId,
        };
      }
      const tx = core.nextTx();
      const at = payload.effectiveAt;
      let touched = 0;
      for (const row of current) {
        const support = core.nodes.support(row.vid);
        if (row.valid_to <= at || !support.includes(payload.request.source_id)) continue;
        touched++;
        const remaining = support.filter((s) => s !== payload.request.source_id);
        if (row.valid_from < at) {
          this.#writes.supersede(row, { valid_to: at, change: 'retract-split' }, support, tx, indexOps);
          const { vid: _v, version: _n, ...base } = row;
          const suffix = core.nodes.insertVersion(
            {
              ...base,
              valid_from: at,
              valid_to: row.valid_to,
              tx_from: tx,
              tx_to: OPEN_TIME,
              retracted: remaining.length === 0 ? 1 : 0,
              change: 'retract-source',
            },
            remaining,
          );
          if (row.dims !== null) {
            const vector = core.vectors.get(row.dims, row.vid);
            if (vector) {
              const meta = {
                nsId: suffix.ns_id,
                validFrom: suffix.valid_from,
                validTo: suffix.valid_to,
                txFrom: tx,
                txTo: OPEN_TIME,
                retracted: suffix.retracted === 1,
              };
              core.vectors.insert(suffix.vid, vector, meta);
              indexOps.push(() => core.index.add(suffix.vid, vector, meta));
            }
          }
        } else {
          this.#writes.supersede(
            row,
            { retracted: remaining.length === 0 ? 1 : 0, change: 'retract-source' },
            remaining,
            tx,
            indexOps,
          );
        }
      }
      if (touched === 0 && replay) {
        core.intents.remove(intent.id);
        return { kind: 'already_applied', nodeId: payload.nodeId };
      }
      const previous = core.sources.get(ns.id, payload.request.source_id);
      core.sources.appendTrust(ns.id, {
        source_id: payload.request.source_id,
        node_id: payload.nodeId,
        action: 'retract',
        credibility: previous?.credibility ?? core.credibility(ns.id, payload.request.source_id, 0.6),
        previous: previous?.credibility ?? null,
        reason: payload.request.reason,
        tx_time: tx,
      });
      core.intents.remove(intent.id);
      return { kind: 'applied', result: { node_id: payload.nodeId, admitted: true } };
    });
    for (const op of indexOps) op();
    return outcome;
  }

  /** Adds a typed, weighted edge between two nodes of the namespace. */
  addEdge(tenant: string, nsName: string, id: string, request: EdgeRequest) {
    const core = this.#core;
    const ns = core.namespace(tenant, nsName);
    const from = this.#nodeIn(ns, id);
    const to = core.nodes.node(request.to);
    if (!to || to.ns_id !== ns.id)
      throw new ValidationError(`to: node ${request.to} does not exist in namespace "${ns.name}"`, {
        code: 'edge_target_not_found',
      });
    if (to.id === from.id) throw new ConflictError('an edge cannot point from a node to itself', { code: 'self_edge' });
    const edge = {
      id: core.newId(),
      ns_id: ns.id,
      from_id: from.id,
      to_id: to.id,
      type: request.type,
      weight: request.weight ?? 1,
      tx_from: core.nextTx(),
      tx_to: OPEN_TIME,
    };
    core.edges.insert(edge);
    return edgeView(edge);
  }
}
