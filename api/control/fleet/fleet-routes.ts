/**
 * Restricted mode's fleet authority routes: the workflow identity exchange, fleet validation and
 * inventory, capacity plans, dispatch, runner attempts, reconciliations, operation reads,
 * administrator-only audit reads and device enrollment with administrator approval.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { isAdministrator, type Principal } from '../../../domain/auth/index.js';
import { ForbiddenError, UnauthorizedError } from '../../../domain/errors.js';
import { exactObject } from '../../../domain/fleet/admission-identity.js';
import { validateFleetDocument } from '../../../domain/spec/validate-fleet-document.js';
import type { FleetAudit } from '../../../controllers/fleet/fleet-audit.js';
import type { FleetAuthority } from '../../../controllers/fleet/fleet-authority.js';
import type { WorkloadTokens } from '../../../controllers/fleet/workload-tokens.js';
import { wholeNumberQuery } from '../../http/whole-number-query.js';

/** Routes of the fleet authority (advertised in restricted mode). */
export const FLEET_AUTHORITY_ROUTES: readonly string[] = [
  'POST /api/v1/fleet/external-admission/token',
  'POST /api/v1/fleet/validate',
  'GET /api/v1/fleet/inventory',
  'POST /api/v1/fleet/plans',
  'GET /api/v1/fleet/plans',
  'GET /api/v1/fleet/plans/{planID}',
  'POST /api/v1/fleet/plans/{planID}/pull-request',
  'POST /api/v1/fleet/plans/{planID}/dispatch',
  'GET /api/v1/fleet/plans/{planID}/attempts',
  'POST /api/v1/fleet/reconciliations',
  'GET /api/v1/operations/{id}',
  'GET /api/v1/audit',
  'POST /api/v1/fleet/devices/enroll',
  'GET /api/v1/fleet/devices/enroll/{id}',
  'GET /api/v1/fleet/devices/enrollments',
  'POST /api/v1/fleet/devices/enrollments/{id}/approve',
  'POST /api/v1/fleet/devices/enrollments/{id}/reject',
];

/** The administrator's name for the audit, or a 401/403. */
function administrator(ctx: Context): string {
  const principal = ctx.state.principal as Principal | undefined;
  if (principal === undefined) {
    ctx.set('WWW-Authenticate', 'Bearer');
    throw new UnauthorizedError(
      'this endpoint needs an administrator (the control token or a validated edge identity)',
      { code: 'missing_credentials' },
    );
  }
  if (!isAdministrator(principal))
    throw new ForbiddenError('only an administrator may call this endpoint', {
      code: 'insufficient_scope',
      details: { path: ctx.path },
    });
  return principal.kind === 'edge-identity' ? `edge:${principal.email ?? principal.subject}` : 'control-token';
}

export interface FleetRoutesOptions {
  readonly authority: FleetAuthority;
  readonly audit: FleetAudit;
  readonly workloadTokens: WorkloadTokens;
}

export function fleetRoutes(options: FleetRoutesOptions): Router {
  const { authority, audit } = options;
  const router = new Router();
  const body = (ctx: Context): unknown => (ctx.request as { body?: unknown }).body;
  router.post('/api/v1/fleet/external-admission/token', async (ctx) => {
    const request = exactObject(body(ctx), 'body', ['idToken']);
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Pragma', 'no-cache');
    ctx.status = 201;
    ctx.body = {
      ...(await options.workloadTokens.exchange(request.idToken)),
      note: 'the token value is shown only in this response',
    };
  });
  router.post('/api/v1/fleet/validate', (ctx) => {
    administrator(ctx);
    const result = validateFleetDocument(exactObject(body(ctx), 'body', ['fleetDocument']).fleetDocument);
    ctx.body = { valid: result.valid, findings: result.findings, nodePools: [...result.nodePools] };
  });
  router.get('/api/v1/fleet/inventory', (ctx) => {
    administrator(ctx);
    ctx.body = authority.inventory();
  });
  router.post('/api/v1/fleet/plans', (ctx) => {
    const by = administrator(ctx);
    ctx.status = 201;
    ctx.body = { plan: authority.createPlan(body(ctx), by) };
  });
  router.get('/api/v1/fleet/plans', (ctx) => {
    administrator(ctx);
    ctx.body = {
      plans: authority.plans(
        wholeNumberQuery(ctx.query.limit, 'limit', 50, 200),
        wholeNumberQuery(ctx.query.offset, 'offset', 0, Number.MAX_SAFE_INTEGER),
      ),
    };
  });
  router.get('/api/v1/fleet/plans/:planId', (ctx) => {
    administrator(ctx);
    ctx.body = { plan: authority.plan(ctx.params.planId!) };
  });
  router.post('/api/v1/fleet/plans/:planId/pull-request', async (ctx) => {
    const by = administrator(ctx);
    ctx.status = 201;
    ctx.body = { plan: await authority.openPullRequest(ctx.params.planId!, by) };
  });
  router.post('/api/v1/fleet/plans/:planId/dispatch', async (ctx) => {
    const by = administrator(ctx);
    ctx.status = 201;
    ctx.body = { attempt: await authority.dispatch(ctx.params.planId!, body(ctx), by) };
  });
  router.get('/api/v1/fleet/plans/:planId/attempts', (ctx) => {
    administrator(ctx);
    ctx.body = authority.attempts(ctx.params.planId!);
  });
  router.post('/api/v1/fleet/reconciliations', (ctx) => {
    const by = administrator(ctx);
    ctx.body = authority.reconcile(body(ctx), by);
  });
  router.get('/api/v1/operations/:id', (ctx) => {
    administrator(ctx);
    ctx.body = authority.operation(ctx.params.id!);
  });
  router.get('/api/v1/audit', (ctx) => {
    administrator(ctx);
    const action = typeof ctx.query.action === 'string' ? ctx.query.action : undefined;
    const entries = audit.list({
      limit: wholeNumberQuery(ctx.query.limit, 'limit', 100, 500),
      offset: wholeNumberQuery(ctx.query.offset, 'offset', 0, Number.MAX_SAFE_INTEGER),
      ...(action === undefined ? {} : { action }),
    });
    ctx.body = { entries, verified: audit.verify(entries) };
  });
  router.post('/api/v1/fleet/devices/enroll', (ctx) => {
    const principal = ctx.state.principal as Principal | undefined;
    ctx.status = 201;
    ctx.body = {
      enrollment: authority.requestEnrollment(body(ctx), principal === undefined ? 'anonymous' : principal.kind),
    };
  });
  router.get('/api/v1/fleet/devices/enroll/:id', (ctx) => {
    const e = authority.enrollment(ctx.params.id!);
    ctx.body = { enrollment: { id: e.id, state: e.state, requestedAt: e.requestedAt, decidedAt: e.decidedAt } };
  });
  router.get('/api/v1/fleet/devices/enrollments', (ctx) => {
    administrator(ctx);
    ctx.body = { enrollments: authority.enrollments() };
  });
  router.post('/api/v1/fleet/devices/enrollments/:id/approve', (ctx) => {
    ctx.body = { enrollment: authority.decideEnrollment(ctx.params.id!, 'approved', administrator(ctx)) };
  });
  router.post('/api/v1/fleet/devices/enrollments/:id/reject', (ctx) => {
    ctx.body = { enrollment: authority.decideEnrollment(ctx.params.id!, 'rejected', administrator(ctx)) };
  });
  return router;
}
