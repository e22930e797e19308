/**
 * Exec routes (ADR 0168, 0169):
 * - `POST /api/v1/exec-sessions` `{ app, process?, command?, cols?, rows?, stepUp? }` → 201 a session
 *   to attach at `WS /api/v1/exec-sessions/{id}/attach` (exec-socket.ts) within 30 s;
 * - `GET /api/v1/exec-sessions`, `GET` / `DELETE /api/v1/exec-sessions/{id}`;
 * - `POST /api/v1/exec-sessions/step-up/challenge` `{ app }` and `POST /api/v1/exec-sessions/step-up`
 *   `{ nonce, publicKey, signature }`: the device-key step-up that session creation consumes when
 *   authentication is on;
 * - `POST /api/apps/{id}/exec` `{ command, process?, stdin?, timeoutSeconds? }`: compatibility exec, one
 *   command to completion → `{ exitCode, signal, stdout, stderr, truncated, timedOut, ... }`.
 * Every route needs scope `apps:exec` when authentication is on (auth.ts).
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import type { Principal } from '../../../domain/auth/index.js';
import { compileValidator } from '../../../domain/json-schema.js';
import type { ExecSessions } from '../../../controllers/exec/exec-sessions.js';
import type { ExecStepUp } from '../../../controllers/exec/step-up.js';
import type { Capability } from '../server/meta-routes.js';

export const EXEC_CAPABILITY: Capability = {
  name: 'exec',
  routes: [
    'POST /api/v1/exec-sessions',
    'GET /api/v1/exec-sessions',
    'GET /api/v1/exec-sessions/{id}',
    'DELETE /api/v1/exec-sessions/{id}',
    'WS /api/v1/exec-sessions/{id}/attach',
    'POST /api/v1/exec-sessions/step-up/challenge',
    'POST /api/v1/exec-sessions/step-up',
    'POST /api/apps/{id}/exec',
  ],
  description:
    "Exec into a running allocation as the app's own user, in its environment, working folder and mount namespace: interactive PTY sessions over a WebSocket and one-shot commands; scope apps:exec, and a device-key step-up for sessions when authentication is on.",
};

const NAME = { type: 'string', minLength: 1, maxLength: 63, pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]*$' } as const;
const COMMAND = {
  type: 'array',
  minItems: 1,
  maxItems: 256,
  items: { type: 'string', minLength: 1, maxLength: 8192 },
  description: 'the program and its arguments, run without a shell (default: a login shell)',
} as const;

export const parseCreate = compileValidator<{
  app: string;
  process?: string;
  command?: string[];
  cols?: number;
  rows?: number;
  stepUp?: string;
}>(
  {
    type: 'object',
    required: ['app'],
    additionalProperties: false,
    properties: {
      app: NAME,
      process: NAME,
      command: COMMAND,
      cols: { type: 'integer', minimum: 2, maximum: 1000 },
      rows: { type: 'integer', minimum: 2, maximum: 1000 },
      stepUp: { type: 'string', minLength: 1, maxLength: 200, description: 'a step-up capability (svc_xcap_...)' },
    },
  },
  'exec session request',
);

export const parseChallenge = compileValidator<{ app: string }>(
  { type: 'object', required: ['app'], additionalProperties: false, properties: { app: NAME } },
  'step-up challenge request',
);

export const parseProof = compileValidator<{ nonce: string; publicKey: string; signature: string }>(
  {
    type: 'object',
    required: ['nonce', 'publicKey', 'signature'],
    additionalProperties: false,
    properties: {
      nonce: { type: 'string', minLength: 1, maxLength: 200 },
      publicKey: { type: 'string', minLength: 1, maxLength: 4096, description: 'the enrolled PEM public key (SPKI)' },
      signature: { type: 'string', minLength: 1, maxLength: 2048, pattern: '^[A-Za-z0-9+/=_-]+$' },
    },
  },
  'step-up proof',
);

export const parseCommand = compileValidator<{
  command: string[] | string;
  process?: string;
  stdin?: string;
  timeoutSeconds?: number;
}>(
  {
    type: 'object',
    required: ['command'],
    additionalProperties: false,
    properties: {
      command: {
        oneOf: [COMMAND, { type: 'string', minLength: 1, maxLength: 65536, description: 'run with /bin/sh -c' }],
      },
      process: NAME,
      stdin: { type: 'string', maxLength: 1048576 },
      timeoutSeconds: { type: 'integer', minimum: 1, maximum: 3600 },
    },
  },
  'exec command',
);

const parseSessionId = compileValidator<{ id: string }>(
  { type: 'object', required: ['id'], properties: { id: { type: 'string', pattern: '^x[sc]_[0-9a-f]{32}$' } } },
  'session',
);

/** Who a principal is, in events and session ownership; `anonymous` with authentication off. */
export function callerName(principal: Principal | undefined): string {
  if (principal === undefined) return 'anonymous';
  switch (principal.kind) {
    case 'control-token':
      return 'control-token';
    case 'edge-identity':
      return `edge:${principal.email ?? principal.subject}`;
    case 'scoped-token':
      return `token:${principal.tokenId} (${principal.name})`;
    case 'workload-identity':
      return `workload:${principal.tokenId}`;
  }
}

const principalOf = (ctx: Context) => ctx.state.principal as Principal | undefined;

/** The exec routes. `authOn`: authentication is configured, so sessions consume a step-up capability. */
export function execRoutes(sessions: ExecSessions, stepUp: ExecStepUp, options: { readonly authOn: boolean }): Router {
  const router = new Router();
  const caller = (ctx: Context) => callerName(principalOf(ctx));
  router.post('/api/v1/exec-sessions/step-up/challenge', (ctx) => {
    const { app } = parseChallenge(ctx.request.body);
    ctx.set('Cache-Control', 'no-store');
    ctx.status = 201;
    ctx.body = stepUp.challenge(app, caller(ctx));
  });
  router.post('/api/v1/exec-sessions/step-up', (ctx) => {
    const proof = parseProof(ctx.request.body);
    ctx.set('Cache-Control', 'no-store');
    ctx.status = 201;
    ctx.body = stepUp.prove(proof, caller(ctx));
  });
  router.post('/api/v1/exec-sessions', async (ctx) => {
    const request = parseCreate(ctx.request.body);
    const who = caller(ctx);
    if (options.authOn && request.stepUp === undefined) stepUp.consume(undefined, request.app, who); // 403 naming it
    const session = await sessions.create({
      app: request.app,
      ...(request.process === undefined ? {} : { process: request.process }),
      ...(request.command === undefined ? {} : { command: request.command }),
      size: { cols: request.cols ?? 80, rows: request.rows ?? 24 },
      createdBy: who,
      ...(options.authOn ? { authorize: () => stepUp.consume(request.stepUp, request.app, who) } : {}),
    });
    const attach = `/api/v1/exec-sessions/${session.id}/attach`;
    ctx.status = 201;
    ctx.set('Location', `/api/v1/exec-sessions/${session.id}`);
    ctx.body = {
      session,
      links: { attach },
      attachWithinSeconds: Math.round(sessions.settings.attachWindowMs / 1000),
    };
  });
  router.get('/api/v1/exec-sessions', (ctx) => {
    const who = caller(ctx);
    ctx.body = { sessions: sessions.list().filter((s) => !options.authOn || s.createdBy === who) };
  });
  router.get('/api/v1/exec-sessions/:id', (ctx) => {
    const { id } = parseSessionId(ctx.params);
    ctx.body = { session: sessions.get(id, options.authOn ? caller(ctx) : undefined) };
  });
  router.delete('/api/v1/exec-sessions/:id', (ctx) => {
    const { id } = parseSessionId(ctx.params);
    sessions.delete(id, options.authOn ? caller(ctx) : undefined);
    ctx.status = 204;
  });
  router.post('/api/apps/:id/exec', async (ctx) => {
    const request = parseCommand(ctx.request.body);
    const command = typeof request.command === 'string' ? ['/bin/sh', '-c', request.command] : request.command;
    const result = await sessions.run({
      app: ctx.params.id!,
      command,
      createdBy: caller(ctx),
      ...(request.process === undefined ? {} : { process: request.process }),
      ...(request.stdin === undefined ? {} : { stdin: request.stdin }),
      ...(request.timeoutSeconds === undefined ? {} : { timeoutMs: request.timeoutSeconds * 1000 }),
    });
    ctx.set('Cache-Control', 'no-store');
    ctx.body = result;
  });
  return router;
}
