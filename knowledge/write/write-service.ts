/**
 * The write path: admission by source credibility, conflict detection, fingerprint dedup,
 * embedding, and a durable pending intent around every mutation (docs/adr/0024, 0025).
 */
import { createHash } from 'node:crypto';
import { ConflictError, isCallerError, UnavailableError, ValidationError } from '../../domain/errors.js';
import {
  CREDIBILITY_FLOOR,
  DEFAULT_CONFIDENCE,
  DEFAULT_SOURCE_CREDIBILITY,
  type MemType,
  type NamespaceMode,
} from '../../domain/knowledge/modes.js';
import { canonicalContent } from '../../domain/knowledge/fingerprint.js';
import { MAX_DIMENSIONS } from '../../store/knowledge/vector-tables.js';
import { OPEN_TIME, type IntentRow, type VersionRow } from '../../store/knowledge/rows.js';
import type { KnowledgeState, Namespace } from '../core/knowledge-state.js';
import { parseTime } from '../core/time.js';

/** The nil UUID returned for rejected writes. */
export const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** An edge created together with a node (extension of the write request). */
export interface EdgeInput {
  readonly to: string;
  readonly type: string;
  readonly weight?: number;
}

/** The REST write request. */
export interface WriteRequest {
  readonly mode?: NamespaceMode;
  readonly content: string;
  readonly source_id: string;
  readonly labels?: readonly string[];
  readonly properties?: Record<string, unknown>;
  readonly vector?: readonly number[];
  readonly model_id?: string;
  readonly confidence?: number;
  readonly valid_from?: string;
  readonly mem_type?: MemType;
  readonly dedup?: boolean;
  readonly skip_dedup?: boolean;
  /** Extension: edges from the new node. */
  readonly edges?: readonly EdgeInput[];
  /** Extension: caller's idempotency key; a repeated key returns the first result. */
  readonly request_id?: string;
}

/** The REST write response. */
export interface WriteResult {
  readonly node_id: string;
  readonly admitted: boolean;
  readonly reason?: string;
  readonly conflict_ids?: string[];
  /** Extension: true when an existing node with the same fingerprint was returned. */
  readonly deduplicated?: boolean;
  /** Extension: true when `request_id` named an earlier write. */
  readonly replayed?: boolean;
}

/** What a write intent stores. */
export interface WriteIntentPayload {
  readonly request: WriteRequest;
  /** The vector as finally used (caller's or embedded), so a replay needs no embedder. */
  readonly vector?: number[];
}

/** Outcome of applying an intent during reconciliation. */
export type ApplyOutcome =
  | { readonly kind: 'applied'; readonly result: WriteResult }
  | { readonly kind: 'already_applied'; readonly nodeId: string }
  | { readonly kind: 'conflict'; readonly reason: string; readonly nodeId?: string };

/** Claim key of a node: `properties.subject` and `properties.predicate`, when both are strings. */
export function claimOf(
  properties: Record<string, unknown> | undefined,
  content: string,
): { key: string; value: string } | undefined {
  const subject = properties?.subject;
  const predicate = properties?.predicate;
  if (typeof subject !== 'string' || typeof predicate !== 'string' || subject.trim() === '' || predicate.trim() === '')
    return undefined;
  const object = properties?.object;
  const value = object === undefined ? content : typeof object === 'string' ? object : JSON.stringify(object);
  return { key: `${canonicalContent(subject)}\u241f${canonicalContent(predicate)}`, value: canonicalContent(value) };
}

/** SHA-256 of the canonical content. */
export function fingerprintOf(content: string): string {
  return createHash('sha256').update(canonicalContent(content)).digest('hex');
}

/** Writes nodes. */
export class WriteService {
  readonly #core: KnowledgeState;

  constructor(core: KnowledgeState) {
    this.#core = core;
  }

  /** Admits (or rejects) and stores one write; durable before it returns. */
  async write(tenant: string, nsName: string, input: WriteRequest): Promise<WriteResult> {
    const core = this.#core;
    const request: WriteRequest = input.edges
      ? { ...input, edges: input.edges.map((e) => ({ ...e, to: e.to.toLowerCase() })) }
      : input;
    if (request.dedup === true && request.skip_dedup === true) {
      throw new ValidationError('dedup and skip_dedup cannot both be true', { code: 'invalid_request' });
    }
    // Validate everything the caller sent before recording anything.
    parseTime('valid_from', request.valid_from);
    let vector: Float32Array | undefined;
    if (request.vector !== undefined) vector = checkVector(request.vector);
    const ns = core.namespaceForWrite(tenant, nsName, request.mode);
    if (request.request_id !== undefined) {
      const existing = core.nodes.nodeByRequest(ns.id, request.request_id);
      if (existing !== undefined) return { node_id: existing, admitted: true, replayed: true };
    }
    const credibility = core.credibility(ns.id, request.source_id, DEFAULT_SOURCE_CREDIBILITY);
    if (credibility < CREDIBILITY_FLOOR) {
      core.telemetry.admissionRejected('low_credibility');
      return {
        node_id: NIL_UUID,
        admitted: false,
        reason: `source "${request.source_id}" has credibility ${credibility}, below the admission floor ${CREDIBILITY_FLOOR}`,
      };
    }
    this.#checkEdges(ns, request.edges ?? []);
    const intent: IntentRow = {
      id: core.newId(),
      ns_id: ns.id,
      kind: 'write',
      node_id: core.newId(),
      request_id: request.request_id ?? null,
      payload: JSON.stringify({ request } satisfies WriteIntentPayload),
      created_at: core.nextTx(),
      attempts: 0,
      last_error: null,
    };
    core.intents.insert(intent);
    if (vector === undefined && core.embedder) {
      try {
        const [embedded] = await core.embedder.embed([request.content]);
        try {
          vector = checkVector(Array.from(embedded ?? []), 'embedding');
        } catch (cause) {
          throw new UnavailableError('embedder answered an unusable vector', { code: 'embedder_failed', cause });
        }
      } catch (error) {
        // Nothing was written: the intent goes, and the caller sees the embedder's error.
        core.intents.remove(intent.id);
        throw error;
      }
    }
    try {
      const outcome = this.apply(ns, intent, { request, ...(vector ? { vector: Array.from(vector) } : {}) }, false);
      if (outcome.kind !== 'applied') throw new Error(`unexpected ${outcome.kind} on a fresh write`);
      return outcome.result;
    } catch (error) {
      if (isCallerError(error)) {
        core.intents.remove(intent.id);
        throw error;
      }
      core.intents.recordFailure(intent.id, error instanceof Error ? error.message : String(error));
      throw new UnavailableError(
        'the write did not complete; it is recorded as a pending intent: inspect GET /recovery/pending and reconcile before resubmitting',
        {
          code: 'write_pending',
          details: { pending_intent_id: intent.id },
          cause: error,
        },
      );
    }
  }

  #checkEdges(ns: Namespace, edges: readonly EdgeInput[]): void {
    edges.forEach((edge, i) => {
      const target = this.#core.nodes.node(edge.to);
      if (!target || target.ns_id !== ns.id) {
        throw new ValidationError(`edges[${i}].to: node ${edge.to} does not exist in namespace "${ns.name}"`, {
          code: 'edge_target_not_found',
          details: { path: `edges[${i}].to` },
        });
      }
    });
  }

  /**
   * Applies a write intent in one transaction that also deletes the intent. With `replay`, later
   * state that the intent would collide with (the same content written after it, a missing edge
   * target) is reported as a conflict instead of being overwritten or duplicated.
   */
  apply(ns: Namespace, intent: IntentRow, payload: WriteIntentPayload, replay: boolean): ApplyOutcome {
    const core = this.#core;
    const { request } = payload;
    const nodeId = intent.node_id ?? core.newId();
    const indexOps: (() => void)[] = [];
    const outcome = core.nodes.transaction((): ApplyOutcome => {
      if (!core.intents.get(intent.id) && replay) return { kind: 'already_applied', nodeId };
      if (core.nodes.node(nodeId)) {
        core.intents.remove(intent.id);
        return { kind: 'already_applied', nodeId };
      }
      const earlier =
        request.request_id === undefined ? undefined : core.nodes.nodeByRequest(ns.id, request.request_id);
      if (earlier !== undefined) {
        // A concurrent or resubmitted write with the same request_id landed first.
        core.intents.remove(intent.id);
        return replay
          ? { kind: 'already_applied', nodeId: earlier }
          : { kind: 'applied', result: { node_id: earlier, admitted: true, replayed: true } };
      }
      const fingerprint = fingerprintOf(request.content);
      if (replay) {
        const later = core.nodes.laterWithFingerprint(ns.id, fingerprint, intent.created_at);
        if (later !== undefined)
          return {
            kind: 'conflict',
            reason: `node ${later} with the same content was written after this intent`,
            nodeId: later,
          };
        for (const edge of request.edges ?? []) {
          if (!core.nodes.node(edge.to)) return { kind: 'conflict', reason: `edge target ${edge.to} no longer exists` };
        }
      }
      const tx = core.nextTx();
      const dedup = request.dedup ?? (core.dedupDefault && request.skip_dedup !== true);
      if (dedup) {
        const existing = core.nodes.byFingerprint(ns.id, fingerprint, tx);
        if (existing) {
          this.#corroborate(existing, request.source_id, tx, indexOps);
          core.intents.remove(intent.id);
          return { kind: 'applied', result: { node_id: existing.node_id, admitted: true, deduplicated: true } };
        }
      }
      const validFrom = parseTime('valid_from', request.valid_from) ?? tx;
      const claim = claimOf(request.properties, request.content);
      const conflicts = claim
        ? [
            ...new Set(
              core.nodes
                .byClaim(ns.id, claim.key, validFrom)
                .filter((v) => v.claim_value !== claim.value)
                .map((v) => v.node_id),
            ),
          ]
        : [];
      core.nodes.createNode(nodeId, ns.id, request.request_id ?? null, tx);
      const vector = payload.vector ? Float32Array.from(payload.vector) : undefined;
      const row = core.nodes.insertVersion(
        {
          node_id: nodeId,
          ns_id: ns.id,
          content: request.content,
          labels: JSON.stringify([...new Set(request.labels ?? [])].sort()),
          properties: JSON.stringify(request.properties ?? {}),
          confidence: request.confidence ?? DEFAULT_CONFIDENCE,
          utility: 0,
          mem_type: request.mem_type ?? null,
          model_id: request.model_id ?? (vector && !request.vector ? (core.embedder?.model ?? null) : null),
          fingerprint,
          claim_key: claim?.key ?? null,
          claim_value: claim?.value ?? null,
          dims: vector?.length ?? null,
          valid_from: validFrom,
          valid_to: OPEN_TIME,
          tx_from: tx,
          tx_to: OPEN_TIME,
          retracted: 0,
          change: 'create',
        },
        [request.source_id],
      );
      if (vector) this.#storeVector(row, vector, indexOps);
      for (const edge of request.edges ?? []) {
        core.edges.insert({
          id: core.newId(),
          ns_id: ns.id,
          from_id: nodeId,
          to_id: edge.to,
          type: edge.type,
          weight: edge.weight ?? 1,
          tx_from: tx,
          tx_to: OPEN_TIME,
        });
      }
      core.intents.remove(intent.id);
      return {
        kind: 'applied',
        result: { node_id: nodeId, admitted: true, ...(conflicts.length > 0 ? { conflict_ids: conflicts } : {}) },
      };
    });
    for (const op of indexOps) op();
    return outcome;
  }

  #storeVector(row: VersionRow, vector: Float32Array, indexOps: (() => void)[]): void {
    const meta = {
      nsId: row.ns_id,
      validFrom: row.valid_from,
      validTo: row.valid_to,
      txFrom: row.tx_from,
      txTo: row.tx_to,
      retracted: row.retracted === 1,
    };
    this.#core.vectors.insert(row.vid, vector, meta);
    indexOps.push(() => this.#core.index.add(row.vid, vector, meta));
  }

  /**
   * Supersedes a version: closes it in transaction time and writes a successor with the given
   * changes (same vector). Index updates run after commit through `indexOps`.
   */
  supersede(
    old: VersionRow,
    changes: Partial<VersionRow>,
    sources: readonly string[],
    tx: number,
    indexOps: (() => void)[],
  ): VersionRow {
    const core = this.#core;
    if (!core.nodes.closeVersion(old.vid, tx))
      throw new ConflictError(`node ${old.node_id} version ${old.version} changed concurrently`, {
        code: 'concurrent_change',
      });
    const { vid: _vid, version: _version, ...rest } = old;
    const row = core.nodes.insertVersion({ ...rest, ...changes, tx_from: tx, tx_to: OPEN_TIME }, sources);
    if (old.dims !== null) {
      core.vectors.closeTx(old.dims, old.vid, tx);
      indexOps.push(() => core.index.closeTx(old.dims!, old.vid, tx));
      const vector = core.vectors.get(old.dims, old.vid);
      if (vector) this.#storeVector(row, vector, indexOps);
    }
    return row;
  }

  #corroborate(found: VersionRow, sourceId: string, tx: number, indexOps: (() => void)[]): void {
    for (const current of this.#core.nodes.current(found.node_id)) {
      if (current.retracted === 1) continue;
      const support = this.#core.nodes.support(current.vid);
      if (support.includes(sourceId)) continue;
      this.supersede(current, { change: 'corroborate' }, [...support, sourceId], tx, indexOps);
    }
  }
}

/** Validates a caller vector: finite numbers, not all zero, at most MAX_DIMENSIONS. */
export function checkVector(values: readonly number[], field = 'vector'): Float32Array {
  if (values.length === 0 || values.length > MAX_DIMENSIONS) {
    throw new ValidationError(`${field}: must have 1-${MAX_DIMENSIONS} dimensions, has ${values.length}`, {
      code: 'invalid_vector',
    });
  }
  let nonZero = false;
  for (const x of values) {
    if (typeof x !== 'number' || !Number.isFinite(x))
      throw new ValidationError(`${field}: every component must be a finite number`, { code: 'invalid_vector' });
    if (x !== 0) nonZero = true;
  }
  if (!nonZero) throw new ValidationError(`${field}: a zero vector has no direction`, { code: 'invalid_vector' });
  return Float32Array.from(values);
}
