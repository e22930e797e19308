/**
 * Knowledge acquisition: plans tasks from gaps, previews or executes them through an HTTP
 * connector with an append-only receipt per attempt, stages returned evidence as durable
 * candidates outside the graph, and admits candidates through the durable write path with a
 * stable write identity (`request_id` `acq:<candidate id>`), automatically or after review
 * (docs/adr/0035-knowledge-acquisition.md).
 */
import { ConflictError, NotFoundError, UnprocessableError, ValidationError } from '../../domain/errors.js';
import { planAcquisition, PLAN_LIMITS, type AcquisitionPlan } from '../../domain/knowledge/acquisition-plan.js';
import {
  connectorRetryCandidates,
  recommendConnectorRetry,
  type ConnectorAttempt,
  type ConnectorRetryCandidate,
  type RetryClass,
} from '../../domain/knowledge/acquisition-retry.js';
import { AcquisitionStore, type AcquisitionCandidateRow } from '../../store/knowledge/acquisition-store.js';
import type { KnowledgeState, Namespace } from '../core/knowledge-state.js';
import type { GapService } from './gap-service.js';
import type { WriteService } from '../write/write-service.js';
import { ACQUISITION_EVENT, callConnector } from './acquisition-connector.js';
import {
  candidateRow,
  keepEvidence,
  originFields,
  timeoutOf,
  type ExecuteRequest,
  type PlanGapOptions,
} from './acquisition-request.js';
import { acquisitionReceiptView, candidateView, retryCandidateView, taskView } from './acquisition-views.js';
import { sha256Hex, type WebhookClient } from '../../domain/knowledge/webhook-port.js';
import { isoTime } from '../core/time.js';
import { ConfiguredConnectors } from './configured-connectors.js';

/** Options of {@link AcquisitionService}. */
export interface AcquisitionOptions {
  /** Connector calls through the outbound guard (its policy says whether private targets are allowed). */
  readonly webhooks: WebhookClient;
  /** Connectors configured on the server, called by id. @default none */
  readonly connectors?: ConfiguredConnectors | undefined;
}

/** Actor recorded when evidence is admitted without review. */
export const AUTO_ADMISSION_ACTOR = 'acquisition-auto';

/** Plans, executes and reviews acquisition. */
export class AcquisitionService {
  readonly #core: KnowledgeState;
  readonly #gaps: GapService;
  readonly #writes: WriteService;
  readonly #store: AcquisitionStore;
  readonly #webhooks: WebhookClient;
  /** The server-configured connectors (their tokens are never shown). */
  readonly connectors: ConfiguredConnectors;

  constructor(core: KnowledgeState, gaps: GapService, writes: WriteService, options: AcquisitionOptions) {
    this.#core = core;
    this.#gaps = gaps;
    this.#writes = writes;
    this.#store = new AcquisitionStore(core.db);
    this.#webhooks = options.webhooks;
    this.connectors = options.connectors ?? new ConfiguredConnectors();
  }

  #plan(
    ns: Namespace,
    budget: number | undefined,
    maxGaps: number | undefined,
    gapOptions: PlanGapOptions = {},
  ): AcquisitionPlan {
    const b = budget ?? PLAN_LIMITS.defaultBudget;
    const m = maxGaps ?? PLAN_LIMITS.defaultMaxGaps;
    if (!Number.isInteger(b) || b < 0 || b > PLAN_LIMITS.maxBudget)
      throw new ValidationError(`budget: must be a whole number from 0 to ${PLAN_LIMITS.maxBudget}`, {
        code: 'invalid_request',
      });
    if (!Number.isInteger(m) || m < 1 || m > PLAN_LIMITS.maxMaxGaps)
      throw new ValidationError(`max_gaps: must be a whole number from 1 to ${PLAN_LIMITS.maxMaxGaps}`, {
        code: 'invalid_request',
      });
    return planAcquisition(
      ns.name,
      this.#gaps.detect(ns, { maxGaps: m, topK: gapOptions.topK, maxDensity: gapOptions.maxDensity }),
      b,
      m,
    );
  }

  /** The plan of a namespace (pure over the current graph; writes nothing). */
  plan(
    tenant: string,
    nsName: string,
    budget?: number,
    maxGaps?: number,
    gapOptions: PlanGapOptions = {},
  ): AcquisitionPlan {
    return this.#plan(this.#core.namespace(tenant, nsName), budget, maxGaps, gapOptions);
  }

  /** Previews (`execute` false: sends and writes nothing) or executes planned tasks through the connector. */
  async execute(tenant: string, nsName: string, request: ExecuteRequest) {
    const core = this.#core;
    const ns = core.namespace(tenant, nsName);
    const connector = request.connector;
    const timeoutMs = timeoutOf(connector.timeoutMs);
    if (request.execute && connector.url === undefined) {
      throw new ValidationError(`connector ${connector.id ?? ''}: endpoint is required to execute`.replace(' :', ':'), {
        code: 'invalid_request',
        details: { connector_id: connector.id ?? null },
      });
    }
    // A named (origin-form) connector is only resolved and checked when something will be sent to it.
    const checked = connector.url !== undefined && (request.execute || connector.id === undefined);
    const target = checked ? await this.#webhooks.checkTarget(connector.url) : undefined;
    const connectorUrl = target?.url.toString() ?? connector.url ?? null;
    const plan = this.#plan(ns, request.budget, request.maxGaps, request.gapOptions);
    let tasks = plan.tasks;
    if (request.taskIds !== undefined) {
      const known = new Map(plan.tasks.map((t) => [t.id, t]));
      const missing = request.taskIds.filter((id) => !known.has(id));
      if (missing.length > 0) {
        throw new NotFoundError(
          `task ${missing[0]} is not in the current plan of namespace "${ns.name}" (plans follow the graph; read POST /acquisition/plan again)`,
          { code: 'task_not_found', details: { task_ids: missing } },
        );
      }
      tasks = [...new Set(request.taskIds)].map((id) => known.get(id)!);
    }
    const prepared = tasks.map((task) => {
      const body = JSON.stringify({
        type: ACQUISITION_EVENT,
        namespace: ns.name,
        idempotency_key: '',
        task: {
          id: task.id,
          type: task.type,
          priority: task.priority,
          description: task.description,
          prompt: task.prompt,
          related_node_ids: task.relatedNodeIds,
          nearest_topics: task.nearestTopics,
        },
        ...(connector.id !== undefined ? originFields(task, connector, request) : {}),
      });
      const idempotencyKey = `${task.id}.${sha256Hex(`${ns.id}\u0000${body}`).slice(0, 16)}`;
      const payload = body.replace('"idempotency_key":""', `"idempotency_key":${JSON.stringify(idempotencyKey)}`);
      const done = this.#store.succeeded(ns.id, idempotencyKey);
      return {
        task,
        idempotencyKey,
        payload,
        done,
        attempt: this.#store.attemptCount(ns.id, idempotencyKey, connectorUrl ?? '') + 1,
      };
    });
    const base = {
      namespace: ns.name,
      execute: request.execute,
      review_before_admission: request.reviewBeforeAdmission,
      connector_url: connectorUrl,
      coverage_score: plan.coverageScore,
      total_nodes: plan.totalNodes,
    };
    if (!request.execute || target === undefined) {
      return {
        ...base,
        results: prepared.map((p) => ({
          task: taskView(p.task),
          idempotency_key: p.idempotencyKey,
          attempt: p.done ? null : p.attempt,
          status: p.done ? 'already_succeeded' : 'planned',
          request_sha256: sha256Hex(p.payload),
          request: JSON.parse(p.payload) as unknown,
        })),
      };
    }
    const maxAttempts = request.maxAttempts ?? 1;
    const results = [];
    for (const p of prepared) {
      if (p.done) {
        // Already fetched: only finish admitting what an interrupted earlier run staged for auto-admission.
        const admitted = await this.#admitPending(tenant, ns, p.idempotencyKey);
        results.push({
          task_id: p.task.id,
          type: p.task.type,
          idempotency_key: p.idempotencyKey,
          status: 'already_succeeded',
          attempt: p.done.attempt,
          receipt: acquisitionReceiptView(p.done),
          candidate_ids: this.#store.candidatesOf(ns.id, p.idempotencyKey).map((c) => c.candidate_id),
          admitted,
        });
        continue;
      }
      let attempt = p.attempt;
      for (let n = 1; ; n++, attempt++) {
        const outcome = await callConnector(this.#webhooks, target, p.payload, {
          idempotencyKey: p.idempotencyKey,
          attempt,
          token: connector.token,
          headers: connector.headers,
          timeoutMs,
        });
        const evidence = keepEvidence(outcome.evidence, request, connector);
        const tx = core.nextTx();
        const receiptId = core.newId();
        const candidates: Omit<AcquisitionCandidateRow, 'id'>[] = evidence.map((e, i) =>
          candidateRow(ns, p.task, p.idempotencyKey, receiptId, i, e, request, tx),
        );
        // The receipt and the staged evidence land in one transaction, before anything is admitted.
        const receipt = core.nodes.transaction(() => {
          const row = this.#store.insertReceipt({
            receipt_id: receiptId,
            ns_id: ns.id,
            task_id: p.task.id,
            task_type: p.task.type,
            idempotency_key: p.idempotencyKey,
            attempt,
            connector_url: connectorUrl!,
            outcome: outcome.success ? 'succeeded' : 'failed',
            retry_class: outcome.retryClass,
            status_code: outcome.statusCode,
            error: outcome.error,
            evidence_count: evidence.length,
            review_before_admission: request.reviewBeforeAdmission ? 1 : 0,
            request_sha256: sha256Hex(p.payload),
            response_sha256: outcome.responseSha256,
            duration_ms: outcome.durationMs,
            tx_time: tx,
          });
          for (const c of candidates) this.#store.insertCandidate(c);
          return row;
        });
        if (!outcome.success && outcome.retryClass === 'retryable' && n < maxAttempts) continue;
        const admitted = request.reviewBeforeAdmission ? [] : await this.#admitPending(tenant, ns, p.idempotencyKey);
        results.push({
          task_id: p.task.id,
          type: p.task.type,
          idempotency_key: p.idempotencyKey,
          status: outcome.success ? 'succeeded' : 'failed',
          attempt,
          receipt: acquisitionReceiptView(receipt),
          candidate_ids: candidates.map((c) => c.candidate_id),
          admitted,
        });
        break;
      }
    }
    return { ...base, results };
  }

  /**
   * Admits every staged auto-admission candidate of an execution; a rejected write is reported, not
   * thrown. `deduplicated` marks a candidate answered with an existing node (same content, or its
   * write identity landed before), as a write response does.
   */
  async #admitPending(tenant: string, ns: Namespace, key: string) {
    const out = [];
    for (const c of this.#store.candidatesOf(ns.id, key)) {
      if (c.review_required === 1 || c.status !== 'staged') continue;
      try {
        const r = await this.#admit(tenant, ns, c, AUTO_ADMISSION_ACTOR, null);
        out.push({
          candidate_id: c.candidate_id,
          node_id: r.node_id,
          admitted: true,
          ...(r.deduplicated === true || r.replayed === true ? { deduplicated: true } : {}),
        });
      } catch (error) {
        if (!(error instanceof UnprocessableError)) throw error;
        out.push({ candidate_id: c.candidate_id, node_id: null, admitted: false, reason: error.message });
      }
    }
    return out;
  }

  /** Writes a candidate as a node (stable `request_id`), then records the decision. */
  async #admit(tenant: string, ns: Namespace, c: AcquisitionCandidateRow, actor: string | null, note: string | null) {
    const write = await this.#writes.write(tenant, ns.name, {
      content: c.content,
      source_id: c.source_id,
      labels: JSON.parse(c.labels) as string[],
      properties: {
        ...(JSON.parse(c.properties) as Record<string, unknown>),
        acquisition: {
          candidate_id: c.candidate_id,
          task_id: c.task_id,
          task_type: c.task_type,
          evidence_url: c.evidence_url,
        },
      },
      ...(c.confidence !== null ? { confidence: c.confidence } : {}),
      request_id: `acq:${c.candidate_id}`,
    });
    if (!write.admitted) {
      throw new UnprocessableError(
        `candidate ${c.candidate_id} was not admitted: ${write.reason ?? 'the write was rejected'}`,
        { code: 'candidate_not_admitted', details: { candidate_id: c.candidate_id } },
      );
    }
    const core = this.#core;
    core.nodes.transaction(() =>
      this.#store.decide({
        ns_id: ns.id,
        candidate_id: c.candidate_id,
        status: 'approved',
        node_id: write.node_id,
        actor,
        note,
        decided_at: core.nextTx(),
      }),
    );
    return write;
  }

  /** Connector receipts, oldest first. */
  receipts(tenant: string, nsName: string, limit = 1000, offset = 0) {
    const ns = this.#core.namespace(tenant, nsName);
    return this.#store.receipts(ns.id, limit, offset).map(acquisitionReceiptView);
  }

  #retryCandidates(ns: Namespace): ConnectorRetryCandidate[] {
    const attempts: ConnectorAttempt[] = this.#store.allReceipts(ns.id).map((r) => ({
      idempotencyKey: r.idempotency_key,
      taskId: r.task_id,
      connectorUrl: r.connector_url,
      success: r.outcome === 'succeeded',
      retryClass: r.retry_class as RetryClass,
      statusCode: r.status_code,
      requestSha256: r.request_sha256,
      error: r.error,
      txTime: r.tx_time,
    }));
    // An idempotency key that succeeded at any connector is resolved everywhere.
    const resolved = new Set(attempts.filter((a) => a.success).map((a) => a.idempotencyKey));
    return connectorRetryCandidates(attempts).filter((c) => !resolved.has(c.digestEventId));
  }

  /** Unresolved failed executions. */
  retryCandidates(tenant: string, nsName: string) {
    return this.#retryCandidates(this.#core.namespace(tenant, nsName)).map(retryCandidateView);
  }

  /** Pacing of each unresolved failed execution at now. */
  retryRecommendations(tenant: string, nsName: string) {
    const core = this.#core;
    const ns = core.namespace(tenant, nsName);
    const now = core.now();
    return this.#retryCandidates(ns).map((c) => {
      const r = recommendConnectorRetry(c, now);
      return {
        idempotency_key: r.digestEventId,
        task_id: r.taskId,
        connector_url: r.targetUrl,
        attempts: r.attempts,
        retry_class: r.retryClass,
        recommended_after: isoTime(r.recommendedAfter),
        delay_seconds: r.delaySeconds,
        ready: r.ready,
        reason: r.reason,
      };
    });
  }

  /** Candidates, oldest first; by default the staged ones awaiting review. */
  candidates(tenant: string, nsName: string, status: string | undefined = 'staged', limit = 100, offset = 0) {
    const ns = this.#core.namespace(tenant, nsName);
    return this.#store.candidates(ns.id, { status }, limit, offset).map(candidateView);
  }

  #candidate(ns: Namespace, id: string): AcquisitionCandidateRow {
    const c = this.#store.candidate(ns.id, id);
    if (!c)
      throw new NotFoundError(`acquisition candidate ${id.slice(0, 64)} does not exist in namespace "${ns.name}"`, {
        code: 'candidate_not_found',
      });
    return c;
  }

  /**
   * Admits a staged candidate as a node. Approving an approved candidate answers its node again
   * (`replayed: true`); a rejected one is a 409.
   */
  async approve(
    tenant: string,
    nsName: string,
    id: string,
    decision: { actor?: string | undefined; note?: string | undefined } = {},
  ) {
    const ns = this.#core.namespace(tenant, nsName);
    const c = this.#candidate(ns, id);
    if (c.status === 'approved')
      return { candidate: candidateView(c), node_id: c.node_id, admitted: true, replayed: true };
    if (c.status !== 'staged')
      throw new ConflictError(`acquisition candidate ${id} was already ${c.status}`, {
        code: 'candidate_already_decided',
        details: { status: c.status },
      });
    const write = await this.#admit(tenant, ns, c, decision.actor ?? null, decision.note ?? null);
    const after = this.#candidate(ns, id);
    if (after.node_id !== write.node_id)
      throw new ConflictError(`acquisition candidate ${id} was decided concurrently (${after.status})`, {
        code: 'candidate_already_decided',
        details: { status: after.status },
      });
    return { candidate: candidateView(after), node_id: write.node_id, admitted: true, replayed: false };
  }

  /** Records a rejection of a staged candidate; nothing is admitted. A decided candidate is a 409. */
  reject(
    tenant: string,
    nsName: string,
    id: string,
    decision: { actor?: string | undefined; note?: string | undefined } = {},
  ) {
    const core = this.#core;
    const ns = core.namespace(tenant, nsName);
    const c = this.#candidate(ns, id);
    const changed = core.nodes.transaction(() =>
      this.#store.decide({
        ns_id: ns.id,
        candidate_id: c.candidate_id,
        status: 'rejected',
        node_id: null,
        actor: decision.actor ?? null,
        note: decision.note ?? null,
        decided_at: core.nextTx(),
      }),
    );
    const after = this.#candidate(ns, id);
    if (!changed)
      throw new ConflictError(`acquisition candidate ${id} was already ${after.status}`, {
        code: 'candidate_already_decided',
        details: { status: after.status },
      });
    return { candidate: candidateView(after) };
  }
}
