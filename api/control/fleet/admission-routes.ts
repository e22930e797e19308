/**
 * External admission routes (restricted mode): begin, admit, resume, reconcile, cleanup and
 * context under `/api/v1/apps/{id}/external-deployments`, plus the deprecated unadvertised alias
 * `POST /api/v1/apps/{id}/external-deployments` that delegates to the same v4-only admit handler.
 * Every answer, errors included, carries `Cache-Control: no-store` and `Pragma: no-cache`; every
 * POST needs an Idempotency-Key; only a workload token with `fleet:external-admission` reaches them.
 */
import Router from '@koa/router';
import type { Context, Next } from 'koa';
import { grants, Scope, type Principal } from '../../../domain/auth/index.js';
import { ForbiddenError, UnauthorizedError, ValidationError } from '../../../domain/errors.js';
import { IDEMPOTENCY_KEY_PATTERN } from '../../../domain/pipeline/index.js';
import type {
  AdmissionCaller,
  AdmissionResult,
  ExternalAdmissions,
} from '../../../controllers/fleet/external-admissions.js';
import { verifierUnavailable } from '../../../controllers/fleet/external-admissions.js';

/** The six advertised admission routes. */
export const ADMISSION_ROUTES: readonly string[] = [
  'POST /api/v1/apps/{id}/external-deployments/begin',
  'POST /api/v1/apps/{id}/external-deployments/admit',
  'POST /api/v1/apps/{id}/external-deployments/resume',
  'POST /api/v1/apps/{id}/external-deployments/reconcile',
  'POST /api/v1/apps/{id}/external-deployments/cleanup',
  'GET /api/v1/apps/{id}/external-deployments/context/{admissionId}',
];

const ADMISSION_PATH = /^\/api\/v1\/apps\/[^/]+\/external-deployments(\/.*)?$/;

/** `Cache-Control: no-store` and `Pragma: no-cache` on every admission answer, the authentication refusals included. */
export async function admissionNoStore(ctx: Context, next: Next): Promise<void> {
  if (ADMISSION_PATH.test(ctx.path)) {
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Pragma', 'no-cache');
  }
  await next();
}

function caller(ctx: Context): AdmissionCaller {
  const principal = ctx.state.principal as Principal | undefined;
  if (principal === undefined) {
    ctx.set('WWW-Authenticate', 'Bearer');
    throw new UnauthorizedError(
      'external admission needs a workload token (exchange the workflow identity at POST /api/v1/fleet/external-admission/token)',
      { code: 'missing_credentials' },
    );
  }
  if (principal.kind !== 'workload-identity' || !grants(principal, Scope.fleetExternalAdmission)) {
    throw new ForbiddenError(
      'this endpoint needs scope fleet:external-admission, obtained only by exchanging a workflow identity; no other token substitutes',
      { code: 'insufficient_scope', details: { scope: Scope.fleetExternalAdmission, path: ctx.path } },
    );
  }
  return {
    tokenId: principal.tokenId,
    repository: principal.repository,
    runId: principal.runId,
    runAttempt: principal.runAttempt,
    workflowRef: principal.workflowRef,
    ref: principal.ref,
    sha: principal.sha,
  };
}

function clientKey(ctx: Context): string {
  const key = ctx.get('idempotency-key');
  if (key === '')
    throw new ValidationError('Idempotency-Key: every external admission call needs an Idempotency-Key header', {
      code: 'idempotency_key_required',
    });
  if (!IDEMPOTENCY_KEY_PATTERN.test(key))
    throw new ValidationError('Idempotency-Key: must be 1-255 printable ASCII characters without spaces', {
      code: 'invalid_idempotency_key',
    });
  return key;
}

function answer(ctx: Context, result: AdmissionResult): void {
  ctx.status = result.status;
  if (result.location !== undefined) ctx.set('Location', result.location);
  ctx.body = result.body;
}

/** The routes; `admissions` is the bridge, or undefined when it is not configured (every call: 503, nothing recorded). */
export function admissionRoutes(admissions: ExternalAdmissions | undefined): Router {
  const router = new Router({ prefix: '/api/v1/apps/:id/external-deployments' });
  router.use(async (_ctx: Context, next: Next) => {
    if (admissions === undefined) throw verifierUnavailable();
    await next();
  });
  const bridge = admissions!;
  const body = (ctx: Context): unknown => (ctx.request as { body?: unknown }).body;
  router.post('/begin', async (ctx) =>
    answer(ctx, await bridge.begin(ctx.params.id!, caller(ctx), clientKey(ctx), body(ctx))),
  );
  router.post('/admit', async (ctx) =>
    answer(ctx, await bridge.admit(ctx.params.id!, caller(ctx), clientKey(ctx), body(ctx))),
  );
  router.post('/resume', async (ctx) =>
    answer(ctx, await bridge.resume(ctx.params.id!, caller(ctx), clientKey(ctx), body(ctx))),
  );
  router.post('/reconcile', async (ctx) => {
    const who = caller(ctx);
    clientKey(ctx);
    answer(ctx, await bridge.reconcile(ctx.params.id!, who, body(ctx)));
  });
  router.post('/cleanup', async (ctx) => {
    const who = caller(ctx);
    clientKey(ctx);
    answer(ctx, await bridge.cleanup(ctx.params.id!, who, body(ctx)));
  });
  router.get('/context/:admissionId', async (ctx) => {
    ctx.body = await bridge.context(ctx.params.id!, caller(ctx), ctx.params.admissionId!);
  });
  // Deprecated, unadvertised: the same v4 admit; the legacy nonce-issuance form is refused (use begin).
  router.post('/', async (ctx) => {
    const who = caller(ctx);
    const key = clientKey(ctx);
    const given = body(ctx);
    const keys = typeof given === 'object' && given !== null ? Object.keys(given) : [];
    if (!keys.includes('receipt') && !keys.includes('admissionId')) {
      throw new ValidationError(
        'the legacy nonce-issuance form is removed: call POST .../external-deployments/begin, then admit with a v4 receipt',
        { code: 'legacy_form_refused' },
      );
    }
    ctx.set('Deprecation', 'true');
    ctx.set(
      'Link',
      `</api/v1/apps/${encodeURIComponent(ctx.params.id!)}/external-deployments/admit>; rel="successor-version"`,
    );
    answer(ctx, await bridge.admit(ctx.params.id!, who, key, given));
  });
  return router;
}
