/**
 * The webhook inbox in control.db: every delivery is persisted as received before any decision,
 * then updated with the decision (matched app, saga, status, reason).
 */
import { randomBytes } from 'node:crypto';
import type { Db } from '../database.js';

/** Status of a delivery. */
export const DeliveryStatus = {
  received: 'received',
  rejected: 'rejected',
  ignored: 'ignored',
  duplicate: 'duplicate',
  deployed: 'deployed',
} as const;
export type DeliveryStatus = (typeof DeliveryStatus)[keyof typeof DeliveryStatus];

/** A delivery as stored and served by `GET /api/webhooks/deliveries`. */
export interface WebhookDelivery {
  readonly id: string;
  readonly provider: string;
  readonly event: string | null;
  readonly deliveryId: string | null;
  readonly repository: string | null;
  readonly ref: string | null;
  readonly branch: string | null;
  readonly commit: string | null;
  readonly matchedApp: string | null;
  readonly sagaId: string | null;
  readonly operationId: string | null;
  readonly status: DeliveryStatus;
  readonly reason: string | null;
  readonly payload: unknown;
  readonly metadata: Record<string, unknown>;
  readonly receivedAt: string;
  readonly decidedAt: string | null;
}

interface RawDelivery {
  id: string;
  provider: string;
  event: string | null;
  delivery_id: string | null;
  repository: string | null;
  ref: string | null;
  branch: string | null;
  commit_sha: string | null;
  matched_app: string | null;
  saga_id: string | null;
  operation_id: string | null;
  status: string;
  reason: string | null;
  payload_json: string | null;
  metadata_json: string;
  received_at: string;
  decided_at: string | null;
}

function fromRaw(raw: RawDelivery): WebhookDelivery {
  return {
    id: raw.id,
    provider: raw.provider,
    event: raw.event,
    deliveryId: raw.delivery_id,
    repository: raw.repository,
    ref: raw.ref,
    branch: raw.branch,
    commit: raw.commit_sha,
    matchedApp: raw.matched_app,
    sagaId: raw.saga_id,
    operationId: raw.operation_id,
    status: raw.status as DeliveryStatus,
    reason: raw.reason,
    payload: raw.payload_json === null ? null : JSON.parse(raw.payload_json),
    metadata: JSON.parse(raw.metadata_json) as Record<string, unknown>,
    receivedAt: raw.received_at,
    decidedAt: raw.decided_at,
  };
}

/** Persists a delivery as received, before anything is decided about it. */
export function recordDelivery(
  db: Db,
  input: {
    provider: string;
    event: string | null;
    deliveryId: string | null;
    repository: string | null;
    ref: string | null;
    branch: string | null;
    commit: string | null;
    payload: unknown;
    metadata: Record<string, unknown>;
  },
  now = new Date(),
): WebhookDelivery {
  const id = `whd_${randomBytes(10).toString('hex')}`;
  db.prepare(
    `INSERT INTO webhook_deliveries (id, provider, event, delivery_id, repository, ref, branch, commit_sha, status, payload_json, metadata_json, received_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'received', ?, ?, ?)`,
  ).run(
    id,
    input.provider,
    input.event,
    input.deliveryId,
    input.repository,
    input.ref,
    input.branch,
    input.commit,
    input.payload === undefined ? null : JSON.stringify(input.payload),
    JSON.stringify(input.metadata),
    now.toISOString(),
  );
  return getDelivery(db, id)!;
}

/** Records the decision about a delivery. */
export function decideDelivery(
  db: Db,
  id: string,
  decision: {
    status: DeliveryStatus;
    reason: string | null;
    matchedApp?: string | null;
    sagaId?: string | null;
    operationId?: string | null;
    metadata?: Record<string, unknown>;
  },
  now = new Date(),
): WebhookDelivery {
  const current = getDelivery(db, id);
  db.prepare(
    'UPDATE webhook_deliveries SET status = ?, reason = ?, matched_app = ?, saga_id = ?, operation_id = ?, metadata_json = ?, decided_at = ? WHERE id = ?',
  ).run(
    decision.status,
    decision.reason,
    decision.matchedApp ?? null,
    decision.sagaId ?? null,
    decision.operationId ?? null,
    JSON.stringify({ ...(current?.metadata ?? {}), ...(decision.metadata ?? {}) }),
    now.toISOString(),
    id,
  );
  return getDelivery(db, id)!;
}

/** One delivery. */
export function getDelivery(db: Db, id: string): WebhookDelivery | undefined {
  const raw = db.prepare('SELECT * FROM webhook_deliveries WHERE id = ?').get(id) as RawDelivery | undefined;
  return raw && fromRaw(raw);
}

/**
 * The earlier delivery with this provider and delivery id that was decided on its merits (deployed
 * or ignored), if any; a rejected or undecided one does not count, so a redelivery is handled.
 */
export function deliveryAlreadyHandled(
  db: Db,
  provider: string,
  deliveryId: string,
  exceptId: string,
): WebhookDelivery | undefined {
  const raw = db
    .prepare(
      "SELECT * FROM webhook_deliveries WHERE provider = ? AND delivery_id = ? AND id != ? AND status IN ('deployed', 'ignored') ORDER BY received_at LIMIT 1",
    )
    .get(provider, deliveryId, exceptId) as RawDelivery | undefined;
  return raw && fromRaw(raw);
}

/** Deliveries, newest first. */
export function listDeliveries(db: Db, options: { limit?: number; offset?: number } = {}): WebhookDelivery[] {
  return (
    db
      .prepare('SELECT * FROM webhook_deliveries ORDER BY received_at DESC, rowid DESC LIMIT ? OFFSET ?')
      .all(options.limit ?? 50, options.offset ?? 0) as RawDelivery[]
  ).map(fromRaw);
}
