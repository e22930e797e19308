/**
 * The REST view of a node version, shared by node reads and retrieval.
 */
import type { EdgeRow, VersionRow } from '../../store/knowledge/rows.js';
import { isoTime } from './time.js';

/** A node version as REST shows it (snake_case). */
export interface NodeView {
  readonly id: string;
  readonly namespace: string;
  readonly version: number;
  readonly content: string;
  readonly labels: string[];
  readonly properties: Record<string, unknown>;
  readonly confidence: number;
  readonly utility: number;
  readonly mem_type: string | null;
  readonly model_id: string | null;
  readonly has_vector: boolean;
  readonly retracted: boolean;
  readonly valid_from: string | null;
  readonly valid_to: string | null;
  readonly tx_from: string | null;
  readonly tx_to: string | null;
  readonly change: string;
  readonly source_ids: string[];
}

/** Parsed labels of a version row. */
export function labelsOf(row: VersionRow): string[] {
  return JSON.parse(row.labels) as string[];
}

/** The first fields of every rendering of a version row (a node, a retrieval result), in wire order. */
export function nodeHead(row: VersionRow, namespace: string) {
  return {
    id: row.node_id,
    namespace,
    version: row.version,
    content: row.content,
    labels: labelsOf(row),
    properties: JSON.parse(row.properties) as Record<string, unknown>,
  };
}

/** Renders a version row. */
export function nodeView(row: VersionRow, namespace: string, sources: readonly string[]): NodeView {
  return {
    ...nodeHead(row, namespace),
    confidence: row.confidence,
    utility: row.utility,
    mem_type: row.mem_type,
    model_id: row.model_id,
    has_vector: row.dims !== null,
    retracted: row.retracted === 1,
    valid_from: isoTime(row.valid_from),
    valid_to: isoTime(row.valid_to),
    tx_from: isoTime(row.tx_from),
    tx_to: isoTime(row.tx_to),
    change: row.change,
    source_ids: [...sources],
  };
}

/** An edge as REST shows it. */
export interface EdgeView {
  readonly id: string;
  readonly from: string;
  readonly to: string;
  readonly type: string;
  readonly weight: number;
  readonly created_at: string | null;
}

/** A node as `GET /v1/namespaces/{ns}/nodes/{id}` shows it: the visible version, its outgoing edges and, when asked, its history. */
export interface NodeDetail extends NodeView {
  readonly edges: readonly EdgeView[];
  /** Every version, oldest first (with `history=true`). */
  readonly history?: readonly NodeView[];
}

/** The REST view of an edge row. */
export function edgeView(edge: EdgeRow): EdgeView {
  return {
    id: edge.id,
    from: edge.from_id,
    to: edge.to_id,
    type: edge.type,
    weight: edge.weight,
    created_at: isoTime(edge.tx_from),
  };
}
