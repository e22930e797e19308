/**
 * The write request and its result, and the checks every write goes through before anything is
 * recorded: vector validation, the content fingerprint and the claim key (docs/adr/0024).
 */
import { hash } from 'node:crypto';
import { ValidationError } from '../../domain/errors.js';
import type { MemType, NamespaceMode } from '../../domain/knowledge/modes.js';
import { canonicalContent } from '../../domain/knowledge/fingerprint.js';
import { MAX_DIMENSIONS } from '../../store/knowledge/vector-tables.js';
import type { IntentRow } from '../../store/knowledge/rows.js';
import type { Namespace } from '../core/knowledge-state.js';
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

/**
 * What `apply` applies: an intent's payload, whose vector may still be the validated `Float32Array`
 * of a fresh write (converting it to an array and back cost two copies of every vector; docs/adr/0166).
 */
export type ApplyPayload = Omit<WriteIntentPayload, 'vector'> & {
  readonly vector?: readonly number[] | Float32Array;
};

/** The payload as an intent stores it (JSON: the vector as an array of numbers). */
export function storedPayload(payload: ApplyPayload): string {
  const { vector, ...rest } = payload;
  return JSON.stringify({ ...rest, ...(vector ? { vector: Array.from(vector) } : {}) } satisfies WriteIntentPayload);
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
  // One-shot `hash` (Node >= 20.12): no Hash object per write; the same digest (docs/adr/0208).
  return hash('sha256', canonicalContent(content), 'hex');
}

/** The outcome of one write of a batch: its result, or the error a single write would have thrown. */
export type WriteOutcome =
  { readonly ok: true; readonly result: WriteResult } | { readonly ok: false; readonly error: unknown };

/** A write request checked and normalised before anything is recorded. */
export interface Prepared {
  readonly request: WriteRequest;
  readonly vector: Float32Array | undefined;
}

/** A write whose intent is recorded, waiting for its embedding. */
export interface Staged {
  readonly ns: Namespace;
  readonly intent: IntentRow;
  readonly item: Prepared;
}

/** Checks everything the caller sent before anything is recorded. */
export function prepare(input: WriteRequest): Prepared {
  const request: WriteRequest = input.edges
    ? { ...input, edges: input.edges.map((e) => ({ ...e, to: e.to.toLowerCase() })) }
    : input;
  if (request.dedup === true && request.skip_dedup === true) {
    throw new ValidationError('dedup and skip_dedup cannot both be true', { code: 'invalid_request' });
  }
  parseTime('valid_from', request.valid_from);
  return { request, vector: request.vector === undefined ? undefined : checkVector(request.vector) };
}

/** Validates a caller vector: finite numbers, not all zero, at most MAX_DIMENSIONS. */
export function checkVector(values: readonly number[], field = 'vector'): Float32Array {
  if (values.length === 0 || values.length > MAX_DIMENSIONS) {
    throw new ValidationError(`${field}: must have 1-${MAX_DIMENSIONS} dimensions, has ${values.length}`, {
      code: 'invalid_vector',
    });
  }
  // One indexed pass that checks and copies: `Float32Array.from` went through the array's iterator,
  // twice the CPU and garbage of this loop for a 384-dim vector (docs/adr/0208).
  const vector = new Float32Array(values.length);
  let nonZero = false;
  for (let i = 0; i < values.length; i++) {
    const x = values[i];
    if (typeof x !== 'number' || !Number.isFinite(x))
      throw new ValidationError(`${field}: every component must be a finite number`, { code: 'invalid_vector' });
    if (x !== 0) nonZero = true;
    vector[i] = x;
  }
  if (!nonZero) throw new ValidationError(`${field}: a zero vector has no direction`, { code: 'invalid_vector' });
  return vector;
}
