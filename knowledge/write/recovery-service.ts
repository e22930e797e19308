/**
 * Recovery of pending intents (writes, retractions, feedback): list what did not land, and replay it on request, stopping at the
 * first intent whose replay would collide with later state (docs/adr/0025).
 */
import type { KnowledgeState } from '../core/knowledge-state.js';
import type { ApplyOutcome, WriteIntentPayload, WriteService } from './write-service.js';
import type { NodeService } from './node-service.js';
import type { FeedbackService } from '../feedback/feedback-service.js';
import { checkVector } from './write-service.js';
import { isoTime } from '../core/time.js';

/** One reconciliation step. */
export interface ReconcileStep {
  readonly intent_id: string;
  readonly kind: string;
  readonly node_id: string | null;
  readonly action: 'would_replay' | 'replayed' | 'already_applied' | 'conflict' | 'failed';
  readonly detail?: string;
  /** A replayed write answered with an existing node of the same content (deduplication). */
  readonly deduplicated?: true;
}

/** Lists and replays pending intents. */
export class RecoveryService {
  readonly #core: KnowledgeState;
  readonly #writes: WriteService;
  readonly #nodes: NodeService;
  readonly #feedback: FeedbackService | undefined;

  constructor(core: KnowledgeState, writes: WriteService, nodes: NodeService, feedback?: FeedbackService) {
    this.#core = core;
    this.#writes = writes;
    this.#nodes = nodes;
    this.#feedback = feedback;
  }

  /** Pending intents of a namespace, oldest first. */
  pending(tenant: string, nsName: string, limit = 100, offset = 0) {
    const ns = this.#core.namespace(tenant, nsName);
    const rows = this.#core.intents.list(ns.id, limit, offset);
    return {
      total: this.#core.intents.count(ns.id),
      pending: rows.map((r) => ({
        id: r.id,
        kind: r.kind,
        node_id: r.node_id,
        request_id: r.request_id,
        created_at: isoTime(r.created_at),
        attempts: r.attempts,
        last_error: r.last_error,
        request: (JSON.parse(r.payload) as { request: unknown }).request,
      })),
    };
  }

  /**
   * Previews (execute false) or replays (execute true) pending intents oldest first. Replay stops
   * at the first conflict or failure and leaves it and everything after it pending.
   */
  async reconcile(tenant: string, nsName: string, execute: boolean, limit = 1000) {
    const core = this.#core;
    const ns = core.namespace(tenant, nsName);
    const steps: ReconcileStep[] = [];
    let stopped = false;
    for (const intent of core.intents.list(ns.id, limit, 0)) {
      if (!execute) {
        steps.push({ intent_id: intent.id, kind: intent.kind, node_id: intent.node_id, action: 'would_replay' });
        continue;
      }
      let outcome: ApplyOutcome;
      try {
        if (intent.kind === 'write') {
          const payload = JSON.parse(intent.payload) as WriteIntentPayload;
          let vector = payload.vector ?? (payload.request.vector ? [...payload.request.vector] : undefined);
          if (vector === undefined && core.embedder) {
            const [embedded] = await core.embedder.embed([payload.request.content]);
            vector = Array.from(checkVector(Array.from(embedded ?? [])));
          }
          outcome = this.#writes.apply(ns, intent, { request: payload.request, ...(vector ? { vector } : {}) }, true);
        } else if (intent.kind === 'retract_source') {
          outcome = this.#nodes.applyRetract(ns, intent, true);
        } else if (intent.kind === 'feedback' && this.#feedback) {
          outcome = this.#feedback.apply(ns, intent, true);
        } else {
          outcome = { kind: 'conflict', reason: `unknown intent kind ${intent.kind}` };
        }
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        core.intents.recordFailure(intent.id, message);
        steps.push({
          intent_id: intent.id,
          kind: intent.kind,
          node_id: intent.node_id,
          action: 'failed',
          detail: message,
        });
        stopped = true;
        break;
      }
      if (outcome.kind === 'conflict') {
        core.intents.recordFailure(intent.id, outcome.reason);
        steps.push({
          intent_id: intent.id,
          kind: intent.kind,
          node_id: intent.node_id,
          action: 'conflict',
          detail: outcome.reason,
        });
        stopped = true;
        break;
      }
      steps.push({
        intent_id: intent.id,
        kind: intent.kind,
        node_id: outcome.kind === 'applied' ? outcome.result.node_id : outcome.nodeId,
        action: outcome.kind === 'applied' ? 'replayed' : 'already_applied',
        ...(outcome.kind === 'applied' && outcome.result.deduplicated === true ? { deduplicated: true as const } : {}),
      });
    }
    return { execute, stopped, steps, remaining: core.intents.count(ns.id) };
  }
}
