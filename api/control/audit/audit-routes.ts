/**
 * Audit receipts (ADR 0187): `GET /api/v1/audit/receipts` lists them newest first (`limit`, `offset`,
 * `target`), `GET /api/v1/audit/verify` checks every hash, signature and chain link and names the
 * public key. Without the production profile no receipts are kept: both answer 404
 * `audit_receipts_not_enabled`.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { NotFoundError } from '../../../domain/errors.js';
import type { AuditReceipt } from '../../../domain/audit/audit-receipt.js';
import type { AuditReceipts } from '../../../controllers/audit/audit-receipts.js';
import { wholeNumberQuery } from '../../http/whole-number-query.js';

function enabled(receipts: AuditReceipts | undefined): AuditReceipts {
  if (receipts === undefined)
    throw new NotFoundError('audit receipts are recorded only under SVC_PROFILE=production', {
      code: 'audit_receipts_not_enabled',
    });
  return receipts;
}

/** A receipt in the REST answer's snake_case. */
function receiptView(r: AuditReceipt): Record<string, unknown> {
  return {
    seq: r.seq,
    phase: r.phase,
    receipt_id: r.receiptId,
    at: r.at,
    actor: r.actor,
    action: r.action,
    target: r.target,
    before_digest: r.beforeDigest,
    after_digest: r.afterDigest,
    outcome: r.outcome,
    refs: r.refs,
    prev_sha256: r.prevSha256,
    sha256: r.sha256,
    key_id: r.keyId,
    signature: r.signature,
  };
}

export function auditRoutes(receipts: AuditReceipts | undefined): Router {
  const router = new Router();
  router.get('/api/v1/audit/receipts', (ctx: Context) => {
    const audit = enabled(receipts);
    const limit = wholeNumberQuery(ctx.query.limit, 'limit', 100, 1000);
    const offset = wholeNumberQuery(ctx.query.offset, 'offset', 0, 10_000_000);
    const target = typeof ctx.query.target === 'string' && ctx.query.target !== '' ? ctx.query.target : undefined;
    ctx.body = {
      receipts: audit.list({ limit, offset, ...(target ? { target } : {}) }).map(receiptView),
      key_id: audit.publicKey.keyId,
    };
  });
  router.get('/api/v1/audit/verify', (ctx: Context) => {
    const audit = enabled(receipts);
    const verdict = audit.verify();
    ctx.body = {
      ok: verdict.ok,
      receipts: verdict.receipts,
      open: verdict.open,
      head_sha256: verdict.headSha256,
      problems: verdict.problems,
      key_id: audit.publicKey.keyId,
      public_key: audit.publicKey.pem,
    };
  });
  return router;
}
