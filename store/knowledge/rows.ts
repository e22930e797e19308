/**
 * Row shapes of knowledge.db and the time conventions shared by every knowledge table.
 */

/** Epoch milliseconds marking an open interval end (9999-12-31T23:59:59.999Z). */
export const OPEN_TIME = 253_402_300_799_999;

/** A namespace row. */
export interface NamespaceRow {
  readonly id: number;
  readonly tenant: string;
  readonly name: string;
  readonly mode: string;
  readonly created_at: number;
}

/** One bi-temporal node version row. */
export interface VersionRow {
  readonly vid: number;
  readonly node_id: string;
  readonly ns_id: number;
  readonly version: number;
  readonly content: string;
  readonly labels: string;
  readonly properties: string;
  readonly confidence: number;
  readonly utility: number;
  readonly mem_type: string | null;
  readonly model_id: string | null;
  readonly fingerprint: string;
  readonly claim_key: string | null;
  readonly claim_value: string | null;
  readonly dims: number | null;
  readonly valid_from: number;
  readonly valid_to: number;
  readonly tx_from: number;
  readonly tx_to: number;
  readonly retracted: number;
  readonly change: string;
}

/** A new version to insert (vid and version are assigned by the store). */
export type NewVersion = Omit<VersionRow, 'vid' | 'version'>;

/** A source row. */
export interface SourceRow {
  readonly ns_id: number;
  readonly source_id: string;
  readonly credibility: number;
  readonly labels: string;
  readonly updated_at: number;
}

/** A source trust timeline row. */
export interface SourceTrustRow {
  readonly id: number;
  readonly source_id: string;
  readonly node_id: string | null;
  readonly action: string;
  readonly credibility: number;
  readonly previous: number | null;
  readonly reason: string | null;
  readonly tx_time: number;
}

/** An edge row. */
export interface EdgeRow {
  readonly id: string;
  readonly ns_id: number;
  readonly from_id: string;
  readonly to_id: string;
  readonly type: string;
  readonly weight: number;
  readonly tx_from: number;
  readonly tx_to: number;
}

/** A durable pending intent row. */
export interface IntentRow {
  readonly id: string;
  readonly ns_id: number;
  readonly kind: string;
  readonly node_id: string | null;
  readonly request_id: string | null;
  readonly payload: string;
  readonly created_at: number;
  readonly attempts: number;
  readonly last_error: string | null;
}

/**
 * The stored row of a new version, every field named: `{ ...version, vid, version }` took V8's slow
 * path for that shape (3.7-4.0 us an object against 0.04 us), and the batch route's serving thread
 * spent 8-10 us a node more with it (docs/adr/0213).
 */
export function versionRow(vid: number, number: number, v: NewVersion): VersionRow {
  return {
    vid,
    node_id: v.node_id,
    ns_id: v.ns_id,
    version: number,
    content: v.content,
    labels: v.labels,
    properties: v.properties,
    confidence: v.confidence,
    utility: v.utility,
    mem_type: v.mem_type,
    model_id: v.model_id,
    fingerprint: v.fingerprint,
    claim_key: v.claim_key,
    claim_value: v.claim_value,
    dims: v.dims,
    valid_from: v.valid_from,
    valid_to: v.valid_to,
    tx_from: v.tx_from,
    tx_to: v.tx_to,
    retracted: v.retracted,
    change: v.change,
  };
}
