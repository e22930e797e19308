/**
 * Reserves an audit receipt before every mutating API request of the production profile (ADR 0187):
 * the handler runs only once the signed reservation is on disk; a receipt store that fails answers
 * 503 `audit_receipt_unavailable` and nothing changes. Receipts name the caller, the route and the
 * target, never the body or the query (they may hold secrets).
 */
import type { Context, Middleware, Next } from 'koa';
import type { Principal } from '../../../domain/auth/index.js';
import type { AuditReceipts } from '../../../controllers/audit/audit-receipts.js';

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Requests that only check or read, though they are POSTs. */
const CHECK_ONLY = [
  /^\/api\/v1\/validate(\/|$)/,
  /^\/api\/v1\/fleet\/validate$/,
  /^\/api\/(v1\/)?apps\/[^/]+\/preflight$/,
  /^\/api\/platform\/(preflight|smoke)$/,
];

/** Who made the request, as receipts name them. */
export function receiptActor(principal: Principal | undefined, path: string): string {
  if (principal === undefined) return path.startsWith('/api/webhooks/') ? 'webhook' : 'anonymous';
  switch (principal.kind) {
    case 'control-token':
      return 'control-token';
    case 'edge-identity':
      return `edge:${principal.email ?? principal.subject}`;
    case 'scoped-token':
      return `token:${principal.name}`;
    case 'workload-identity':
      return `workload:${principal.repository}`;
  }
}

/** The target and action of a mutating request: `app:<name>` with the name as `{id}` in the action. */
export function receiptSubject(method: string, path: string): { target: string; action: string } {
  const app = /^\/api\/(?:v1\/)?apps\/([^/]+)/.exec(path);
  if (app) {
    let name = app[1]!;
    try {
      name = decodeURIComponent(name);
    } catch {
      // A malformed escape stays as sent; the route itself refuses it.
    }
    return { target: `app:${name}`, action: `${method} ${path.replace(`/${app[1]!}`, '/{id}')}` };
  }
  const area = /^\/api\/(?:v1\/)?([^/]+)/.exec(path)?.[1] ?? 'api';
  const target = area === 'access' && path.startsWith('/api/access/tokens') ? 'tokens' : area;
  return { target, action: `${method} ${path}` };
}

/** The middleware; placed after authentication so the actor is known. */
export function receiptMiddleware(receipts: AuditReceipts): Middleware {
  return async (ctx: Context, next: Next) => {
    if (!MUTATING.has(ctx.method) || !ctx.path.startsWith('/api/') || CHECK_ONLY.some((re) => re.test(ctx.path)))
      return next();
    const { target, action } = receiptSubject(ctx.method, ctx.path);
    const actor = receiptActor(ctx.state.principal as Principal | undefined, ctx.path);
    const requestId = typeof ctx.state.requestId === 'string' ? ctx.state.requestId : undefined;
    await receipts.guard({
      reservation: { actor, action, target, ...(requestId ? { refs: { request: requestId } } : {}) },
      run: () => next(),
      outcomeOf: () => (ctx.status >= 500 ? 'failed' : ctx.status >= 400 ? 'refused' : 'succeeded'),
      refsOf: () => {
        const body = ctx.body as { operation?: { id?: unknown }; deploymentId?: unknown } | undefined;
        const operation = body?.operation?.id;
        return {
          status: String(ctx.status),
          ...(typeof operation === 'string' ? { operation } : {}),
          ...(typeof body?.deploymentId === 'string' ? { deployment: body.deploymentId } : {}),
        };
      },
    });
  };
}
