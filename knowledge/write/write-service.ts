/**
 * The write path: admission by source credibility, conflict detection, fingerprint dedup,
 * embedding, and a durable pending intent around every mutation (docs/adr/0024, 0025).
 */
import { ConflictError, isCallerError, UnavailableError, ValidationError } from '../../domain/errors.js';
import { CREDIBILITY_FLOOR, DEFAULT_CONFIDENCE, DEFAULT_SOURCE_CREDIBILITY } from '../../domain/knowledge/modes.js';
import { OPEN_TIME, type IntentRow, type VersionRow } from '../../store/knowledge/rows.js';
import type { KnowledgeState, Namespace } from '../core/knowledge-state.js';
import { parseTime } from '../core/time.js';
import {
  checkVector,
  claimOf,
  fingerprintOf,
  NIL_UUID,
  prepare,
  storedPayload,
  type ApplyPayload,
  type ApplyOutcome,
  type EdgeInput,
  type Prepared,
  type Staged,
  type WriteIntentPayload,
  type WriteOutcome,
  type WriteRequest,
  type WriteResult,
} from './write-request.js';

export {
  checkVector,
  claimOf,
  fingerprintOf,
  NIL_UUID,
  type ApplyOutcome,
  type EdgeInput,
  type WriteIntentPayload,
  type WriteOutcome,
  type WriteRequest,
  type WriteResult,
} from './write-request.js';

function failed(error: unknown): WriteOutcome {
  return { ok: false, error };
}

function run(op: () => void): void {
  op();
}
/** Writes nodes. */
export class WriteService {
  readonly #core: KnowledgeState;

  constructor(core: KnowledgeState) {
    this.#core = core;
  }

  /** Admits (or rejects) and stores one write; durable before it returns. */
  async write(tenant: string, nsName: string, input: WriteRequest): Promise<WriteResult> {
    const [outcome] = await this.writeBatch(tenant, nsName, [input]);
    if (!outcome!.ok) throw outcome!.error;
    return outcome!.result;
  }

  /**
   * Admits (or rejects) and stores several writes, in order, each with the admission, dedup and
   * conflict rules of a single write and each seeing the ones before it (docs/adr/0182). They share
   * group commits with every other write queued at the same time; each item's outcome is final and
   * durable when the returned promise resolves. One item's failure does not affect the others.
   */
  async writeBatch(tenant: string, nsName: string, inputs: readonly WriteRequest[]): Promise<WriteOutcome[]> {
    const core = this.#core;
    const items = inputs.map((input): Prepared | WriteOutcome => {
      try {
        return prepare(input);
      } catch (error) {
        return { ok: false, error };
      }
    });
    const needsEmbedding = (item: Prepared | WriteOutcome): item is Prepared =>
      'request' in item && item.vector === undefined && core.embedder !== undefined;
    if (!items.some(needsEmbedding)) {
      // No awaited step: admission and apply run in one job, one commit per write.
      return Promise.all(
        items.map((item) =>
          'request' in item
            ? core.commits
                .run((after, guarded) => this.#admitAndApply(tenant, nsName, item, after, guarded))
                .catch(failed)
            : Promise.resolve(item),
        ),
      );
    }
    // An embedder call lies between admission and apply: record intents first (ADR 0025).
    const staged = await Promise.all(
      items.map(async (item): Promise<Staged | Prepared | WriteOutcome> => {
        if (!needsEmbedding(item)) return item;
        try {
          const admitted = await core.commits.run((after) => this.#recordIntent(tenant, nsName, item, after));
          return 'intent' in admitted ? { ...admitted, item } : admitted;
        } catch (error) {
          return { ok: false, error };
        }
      }),
    );
    const toEmbed = staged.filter((s): s is Staged => 'intent' in s);
    let vectors: Float32Array[] | undefined;
    let embedError: unknown;
    if (toEmbed.length > 0) {
      try {
        vectors = await core.embedder!.embed(toEmbed.map((s) => s.item.request.content));
        vectors = vectors.map((v) => {
          try {
            return checkVector(Array.from(v ?? []), 'embedding');
          } catch (cause) {
            throw new UnavailableError('embedder answered an unusable vector', { code: 'embedder_failed', cause });
          }
        });
        if (vectors.length !== toEmbed.length)
          throw new UnavailableError('embedder answered too few vectors', { code: 'embedder_failed' });
      } catch (error) {
        embedError = error;
        vectors = undefined;
      }
    }
    // Apply jobs are queued in request order, so the batch's items see each other as serial writes do.
    const embedded = new Map(toEmbed.map((s, i) => [s, vectors?.[i]]));
    return Promise.all(
      staged.map((s): Promise<WriteOutcome> => {
        if ('ok' in s) return Promise.resolve(s);
        if ('request' in s)
          return core.commits
            .run((after, guarded) => this.#admitAndApply(tenant, nsName, s, after, guarded))
            .catch(failed);
        const vector = embedded.get(s);
        if (vector === undefined) {
          // Nothing was written: the intent goes, and the caller sees the embedder's error.
          return core.commits
            .run(() => core.intents.remove(s.intent.id))
            .then((): WriteOutcome => ({ ok: false, error: embedError }), failed);
        }
        return core.commits
          .run((after, guarded) =>
            this.#applyFresh(s.ns, s.intent, { request: s.item.request, vector }, true, after, guarded),
          )
          .catch(failed);
      }),
    );
  }

  /**
   * Admission of a write inside its group job: the replayed or rejected result, or undefined to go on.
   * The rejection is counted once the group committed: a group may run twice (docs/adr/0208).
   */
  #admit(ns: Namespace, request: WriteRequest, after: (op: () => void) => void): WriteOutcome | undefined {
    const core = this.#core;
    if (request.request_id !== undefined) {
      const existing = core.nodes.nodeByRequest(ns.id, request.request_id);
      if (existing !== undefined) return { ok: true, result: { node_id: existing, admitted: true, replayed: true } };
    }
    const credibility = core.credibility(ns.id, request.source_id, DEFAULT_SOURCE_CREDIBILITY);
    if (credibility < CREDIBILITY_FLOOR) {
      after(() => core.telemetry.admissionRejected('low_credibility'));
      return {
        ok: true,
        result: {
          node_id: NIL_UUID,
          admitted: false,
          reason: `source "${request.source_id}" has credibility ${credibility}, below the admission floor ${CREDIBILITY_FLOOR}`,
        },
      };
    }
    this.#checkEdges(ns, request.edges ?? []);
    return undefined;
  }

  /**
   * The intent of a write. Without `recorded` its payload and id are left empty: the intent is stored
   * only if the write fails, and then with the payload as applied and a new id (`#applyFresh`), so
   * serialising the request (a 384-dim vector is ~7 KB of JSON) and making an id for every write would
   * be wasted (docs/adr/0164, 0202).
   */
  #intentOf(ns: Namespace, request: WriteRequest, recorded: boolean): IntentRow {
    const core = this.#core;
    return {
      id: recorded ? core.newId() : '',
      ns_id: ns.id,
      kind: 'write',
      node_id: core.newId(),
      request_id: request.request_id ?? null,
      payload: recorded ? JSON.stringify({ request } satisfies WriteIntentPayload) : '',
      created_at: core.nextTx(),
      attempts: 0,
      last_error: null,
    };
  }

  /** Group job of a write with nothing awaited before apply: admission and apply in one commit. */
  #admitAndApply(
    tenant: string,
    nsName: string,
    item: Prepared,
    after: (op: () => void) => void,
    guarded: boolean,
  ): WriteOutcome {
    const ns = this.#core.namespaceForWrite(tenant, nsName, item.request.mode);
    const early = this.#admit(ns, item.request, after);
    if (early) return early;
    const payload = { request: item.request, ...(item.vector ? { vector: item.vector } : {}) };
    return this.#applyFresh(ns, this.#intentOf(ns, item.request, false), payload, false, after, guarded);
  }

  /** Group job recording the intent of a write that awaits the embedder. */
  #recordIntent(
    tenant: string,
    nsName: string,
    item: Prepared,
    after: (op: () => void) => void,
  ): WriteOutcome | { ns: Namespace; intent: IntentRow } {
    const ns = this.#core.namespaceForWrite(tenant, nsName, item.request.mode);
    const early = this.#admit(ns, item.request, after);
    if (early) return early;
    const intent = this.#intentOf(ns, item.request, true);
    this.#core.intents.insert(intent);
    return { ns, intent };
  }

  /**
   * Applies a fresh write inside its group job. A failure that is not the caller's leaves the intent
   * pending (recorded here when it was not yet) and answers 503 `write_pending` (ADR 0025). Without
   * `guarded` (no savepoint around the job, docs/adr/0208) nothing undoes a failed apply's changes,
   * so every failure is thrown: the group then runs again with savepoints and this job with them.
   */
  #applyFresh(
    ns: Namespace,
    intent: IntentRow,
    payload: ApplyPayload,
    recorded: boolean,
    after: (op: () => void) => void,
    guarded: boolean,
  ): WriteOutcome {
    const core = this.#core;
    try {
      const outcome = this.apply(ns, intent, payload, false, after, !recorded, guarded);
      if (outcome.kind !== 'applied') throw new Error(`unexpected ${outcome.kind} on a fresh write`);
      return { ok: true, result: outcome.result };
    } catch (error) {
      if (!guarded) throw error;
      if (isCallerError(error)) {
        if (recorded) core.intents.remove(intent.id);
        return { ok: false, error };
      }
      const id = recorded ? intent.id : core.newId();
      if (!recorded) core.intents.insert({ ...intent, id, payload: storedPayload(payload) });
      core.intents.recordFailure(id, error instanceof Error ? error.message : String(error));
      return {
        ok: false,
        error: new UnavailableError(
          'the write did not complete; it is recorded as a pending intent: inspect GET /recovery/pending and reconcile before resubmitting',
          { code: 'write_pending', details: { pending_intent_id: id }, cause: error },
        ),
      };
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
   * target) is reported as a conflict instead of being overwritten or duplicated. With `unrecorded`
   * (a fresh write whose intent was never stored, so no one else knows its new node id), the lookups
   * of that intent and node are skipped: they cannot find anything (docs/adr/0164). Without
   * `savepoint` (a group job run unguarded, docs/adr/0208) the changes are made in the enclosing
   * transaction directly: the caller rolls all of it back if this throws.
   */
  apply(
    ns: Namespace,
    intent: IntentRow,
    payload: ApplyPayload,
    replay: boolean,
    afterCommit?: (op: () => void) => void,
    unrecorded = false,
    savepoint = true,
  ): ApplyOutcome {
    const core = this.#core;
    const { request } = payload;
    const nodeId = intent.node_id ?? core.newId();
    const indexOps: (() => void)[] = [];
    const removeIntent = unrecorded ? () => {} : () => core.intents.remove(intent.id);
    const inTransaction = savepoint ? <T>(fn: () => T): T => core.nodes.transaction(fn) : <T>(fn: () => T): T => fn();
    const outcome = inTransaction((): ApplyOutcome => {
      if (replay && !core.intents.get(intent.id)) return { kind: 'already_applied', nodeId };
      if (!unrecorded && core.nodes.node(nodeId)) {
        removeIntent();
        return { kind: 'already_applied', nodeId };
      }
      const earlier =
        request.request_id === undefined ? undefined : core.nodes.nodeByRequest(ns.id, request.request_id);
      if (earlier !== undefined) {
        // A concurrent or resubmitted write with the same request_id landed first.
        removeIntent();
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
          removeIntent();
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
      const vector =
        payload.vector === undefined || payload.vector instanceof Float32Array
          ? payload.vector
          : Float32Array.from(payload.vector);
      const row = core.nodes.insertFirstVersion(
        request.request_id ?? null,
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
      removeIntent();
      return {
        kind: 'applied',
        result: { node_id: nodeId, admitted: true, ...(conflicts.length > 0 ? { conflict_ids: conflicts } : {}) },
      };
    });
    // Index updates run once the transaction holding them committed (the group's, inside a group job).
    for (const op of indexOps) (afterCommit ?? run)(op);
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
