/**
 * Function routes: invoke an app's function process and read its execution history.
 *
 * `POST /api/apps/{id}/invoke` has two forms (docs/adr/0100-functions.md):
 *
 * - process form, a JSON object with a `process` key: `{ process, body? }` → 202 `{ executionId, jobId, ... }`
 *   at once; the outcome is read from the history;
 * - legacy form, any other body: the body itself is the input of the app's only function process;
 *   the answer waits for the run and is its standard output (200), or 502 `function_failed`, or
 *   504 `function_timed_out`.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { TimeoutError, ValidationError } from '../../../domain/errors.js';
import { compileValidator } from '../../../domain/json-schema.js';
import type { FunctionService, Invocation } from '../../../controllers/functions/index.js';
import type { IdempotencyKeys } from '../../../controllers/operations/index.js';
import type { ErrorBody } from '../../http/error-middleware.js';
import { idempotency } from '../../http/idempotency.js';
import type { Capability } from '../server/meta-routes.js';

/** Largest page of `GET /api/apps/{id}/function/history`. */
export const FUNCTION_HISTORY_PAGE_LIMIT = 100;
const DEFAULT_HISTORY_LIMIT = 20;

/** The routes this file serves, for `GET /api/v1/capabilities`. */
export const FUNCTIONS_CAPABILITY: Capability = {
  name: 'functions',
  routes: ['POST /api/apps/{id}/invoke', 'GET /api/apps/{id}/function/history'],
  description:
    'On-demand function processes: one-shot batch executions from the deployed release with the request in SVC_REQUEST_BODY, SVC_REQUEST_METHOD and SVC_REQUEST_PATH, and their durable execution history.',
};

const PROCESS_NAME = { type: 'string', minLength: 1, maxLength: 63, pattern: '^[A-Za-z0-9][A-Za-z0-9_-]*$' } as const;

export const parseProcessForm = compileValidator<{ process: string; body?: unknown }>(
  {
    type: 'object',
    required: ['process'],
    additionalProperties: false,
    properties: {
      process: { ...PROCESS_NAME, description: 'the function process to run' },
      body: {
        description: 'the function input, any JSON value (default null), delivered as JSON text in SVC_REQUEST_BODY',
      },
    },
  },
  'invoke request',
);

const parseHistoryQuery = compileValidator<{ limit?: string; process?: string; execution?: string }>(
  {
    type: 'object',
    additionalProperties: false,
    properties: {
      limit: {
        type: 'string',
        pattern: '^[1-9][0-9]{0,5}$',
        description: `records to return, newest first (default ${DEFAULT_HISTORY_LIMIT}, at most ${FUNCTION_HISTORY_PAGE_LIMIT})`,
      },
      process: { ...PROCESS_NAME, description: 'only this function process' },
      execution: { type: 'string', minLength: 1, maxLength: 100, description: 'only this execution id' },
    },
  },
  'history query',
);

/** The request body as the client sent it: parsed JSON, text, or nothing. */
type RequestInput =
  | { readonly kind: 'json'; readonly value: unknown }
  | { readonly kind: 'text'; readonly value: string }
  | { readonly kind: 'empty'; readonly value: null };

function requestInput(ctx: Context): RequestInput {
  const request = ctx.request as Context['request'] & { body?: unknown; rawBody?: string };
  if (request.rawBody === undefined) {
    // The body parser leaves types it does not read (forms, octet streams) unparsed.
    if ((request.length ?? 0) > 0) {
      throw new ValidationError(
        `request body of type "${request.type}" is not accepted: send the function input as JSON (Content-Type: application/json) or text (text/plain)`,
        {
          code: 'unsupported_media_type',
          details: { contentType: request.type },
        },
      );
    }
    return { kind: 'empty', value: null };
  }
  if (request.rawBody.trim() === '') return { kind: 'empty', value: null };
  if (request.is('text/*', 'application/yaml', 'application/x-yaml'))
    return { kind: 'text', value: String(request.body) };
  return { kind: 'json', value: request.body };
}

const isProcessForm = (input: RequestInput): boolean =>
  input.kind === 'json' &&
  typeof input.value === 'object' &&
  input.value !== null &&
  !Array.isArray(input.value) &&
  Object.hasOwn(input.value, 'process');

const historyLink = (invocation: Invocation) =>
  `/api/apps/${encodeURIComponent(invocation.app)}/function/history?execution=${encodeURIComponent(invocation.executionId)}`;

function looksLikeJson(text: string): boolean {
  if (text.trim() === '') return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** `POST /api/apps/{id}/invoke`, `GET /api/apps/{id}/function/history`. */
export function functionsRoutes(service: FunctionService, keys: IdempotencyKeys): Router {
  const router = new Router();
  const idempotent = idempotency({ keys });
  router.post('/api/apps/:id/invoke', idempotent, async (ctx) => {
    const app = ctx.params.id!;
    const input = requestInput(ctx);
    if (isProcessForm(input)) {
      const form = parseProcessForm(input.value);
      const invocation = await service.invoke(app, { process: form.process, body: form.body ?? null, path: ctx.path });
      ctx.status = 202;
      ctx.set('Location', historyLink(invocation));
      ctx.body = { ...invocation, links: { history: historyLink(invocation) } };
      return;
    }
    const invocation = await service.invoke(app, { body: input.value, path: ctx.path });
    const headers = { 'X-Svc-Execution-Id': invocation.executionId, 'X-Svc-Job-Id': invocation.jobId };
    ctx.set(headers);
    const { record, output } = await service.result(invocation);
    const details = {
      executionId: record.executionId,
      jobId: record.jobId,
      process: record.process,
      status: record.status,
      exitCode: record.exitCode,
      durationMs: record.durationMs,
    };
    if (record.status === 'succeeded') {
      ctx.status = 200;
      ctx.type = looksLikeJson(output) ? 'application/json' : 'text/plain; charset=utf-8';
      ctx.body = output;
      return;
    }
    if (record.status === 'timed_out') {
      throw new TimeoutError(
        `function ${app}/${record.process} exceeded its timeout of ${invocation.timeoutMs} ms and was stopped`,
        { code: 'function_timed_out', details },
      );
    }
    // Not the caller's mistake and not ours: the function failed, as an upstream would (502).
    ctx.status = 502;
    ctx.body = {
      error: {
        code: 'function_failed',
        message: `function ${app}/${record.process} failed${record.exitCode === null ? '' : ` with exit code ${record.exitCode}`}`,
        details,
      },
    } satisfies ErrorBody;
  });
  router.get('/api/apps/:id/function/history', async (ctx) => {
    const query = parseHistoryQuery({ ...ctx.query });
    const limit = Math.min(
      query.limit === undefined ? DEFAULT_HISTORY_LIMIT : Number(query.limit),
      FUNCTION_HISTORY_PAGE_LIMIT,
    );
    ctx.body = await service.history(ctx.params.id!, {
      limit,
      ...(query.process !== undefined ? { process: query.process } : {}),
      ...(query.execution !== undefined ? { executionId: query.execution } : {}),
    });
  });
  return router;
}
