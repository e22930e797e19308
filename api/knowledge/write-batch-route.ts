/**
 * `POST /v1/namespaces/{ns}/write/batch` (extension, docs/adr/0182): up to {@link MAX_BATCH_WRITES}
 * write requests in one body, each admitted as a single write would be and answered in order with
 * its own result or error. The items share group commits: the response comes once all are durable.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { ValidationError } from '../../domain/errors.js';
import { compileValidator } from '../../domain/json-schema.js';
import type { KnowledgeServices, WriteRequest } from '../../knowledge/index.js';
import { errorResponse } from '../http/error-middleware.js';
import { requirePermission } from './auth.js';
import type { KnowledgeMetrics } from './metrics.js';
import { modeLabel } from './metric-labels.js';
import { validateWrite } from './request-schemas.js';

/** Most writes in one batch. */
export const MAX_BATCH_WRITES = 1000;
/** Largest batch body: 1,000 writes with 1,024-dimension vectors fit (other routes keep `SVC_BODY_LIMIT`). */
export const BATCH_BODY_LIMIT_BYTES = 32 * 1024 * 1024;
/** Paths whose bodies may be as large as {@link BATCH_BODY_LIMIT_BYTES}. */
export const BATCH_PATH = /^\/v1\/namespaces\/[^/]+\/write\/batch$/;

export const validateEnvelope = compileValidator<{ writes: unknown[] }>(
  {
    type: 'object',
    additionalProperties: false,
    required: ['writes'],
    properties: { writes: { type: 'array', minItems: 1, items: {} } },
  },
  'batch write request',
);

/** One item of the response: the write result with status 200, or the error a single write would answer. */
type BatchItem =
  ({ status: 200 } & Record<string, unknown>) | ({ status: number } & ReturnType<typeof errorResponse>['body']);

/** Checks one item as `POST /write` does; undefined when it is valid. */
function itemProblem(raw: unknown, index: number): ValidationError | undefined {
  const problems = validateWrite.check(raw);
  if (problems.length > 0) {
    return new ValidationError(`writes[${index}] is invalid: ${problems.map((p) => p.message).join('; ')}`, {
      code: 'invalid_request',
      details: { index, problems },
    });
  }
  const body = raw as WriteRequest;
  if (body.content === '' && body.vector === undefined) {
    return new ValidationError(`writes[${index}].content: must not be empty unless a vector is given`, {
      code: 'invalid_request',
      details: { index, problems: [{ path: 'content', keyword: 'minLength', message: 'content: must not be empty' }] },
    });
  }
  return undefined;
}

/** Adds the batch route to the namespace router. */
export function addWriteBatchRoute(router: Router, services: KnowledgeServices, metrics: KnowledgeMetrics): void {
  router.post('/write/batch', async (ctx: Context) => {
    const { tenant } = requirePermission(ctx, 'write');
    const raw = ctx.request.body as { writes?: unknown } | undefined;
    if (Array.isArray(raw?.writes) && raw.writes.length > MAX_BATCH_WRITES) {
      throw new ValidationError(
        `writes: a batch holds at most ${MAX_BATCH_WRITES} writes, this one has ${raw.writes.length}; split it`,
        { code: 'batch_too_large', details: { max: MAX_BATCH_WRITES, count: raw.writes.length } },
      );
    }
    const { writes } = validateEnvelope(raw);
    const ns = String(ctx.params.ns);
    const invalid = writes.map(itemProblem);
    const valid = writes.flatMap((w, i) => (invalid[i] === undefined ? [w as WriteRequest] : []));
    const outcomes = await metrics.timeWriteBatch(
      () => services.writes.writeBatch(tenant, ns, valid),
      (o) => (!o.ok ? 'error' : !o.result.admitted ? 'rejected' : o.result.deduplicated ? 'deduplicated' : 'admitted'),
      modeLabel(services, tenant, ns),
    );
    let next = 0;
    const results = writes.map((_, i): BatchItem => {
      const problem = invalid[i];
      if (problem !== undefined) return { status: 400, ...errorResponse(problem).body };
      const outcome = outcomes[next++]!;
      if (outcome.ok) return { status: 200, ...outcome.result };
      const { status, body } = errorResponse(outcome.error);
      return { status, ...body };
    });
    ctx.body = { results };
  });
}
