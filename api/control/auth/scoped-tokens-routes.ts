/**
 * Scoped access tokens: `POST /api/access/tokens` (issue; the secret is shown once),
 * `GET /api/access/tokens`, `GET /api/access/tokens/{id}`, `DELETE /api/access/tokens/{id}`
 * (revoke). Only administrators (the control token, a validated edge identity) manage tokens.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { isAdministrator, ISSUABLE_SCOPES, type Principal } from '../../../domain/auth/index.js';
import { ForbiddenError, NotFoundError, UnauthorizedError } from '../../../domain/errors.js';
import { compileValidator } from '../../../domain/json-schema.js';
import type { ScopedTokens, IssueTokenRequest } from '../../../controllers/auth/scoped-tokens.js';

export const ISSUE_TOKEN_SCHEMA = {
  type: 'object',
  required: ['name', 'scopes'],
  additionalProperties: false,
  properties: {
    name: {
      type: 'string',
      minLength: 1,
      maxLength: 100,
      pattern: '^[A-Za-z0-9][A-Za-z0-9 ._:@/-]*$',
      description: 'what the token is for, e.g. "prometheus scraper"',
    },
    scopes: {
      type: 'array',
      minItems: 1,
      maxItems: 8,
      items: { type: 'string', minLength: 1, maxLength: 64 },
      description: `scopes to grant; issuable: ${ISSUABLE_SCOPES.join(', ')}`,
    },
    expiresIn: {
      type: 'string',
      minLength: 2,
      maxLength: 32,
      description: 'Go duration until the token expires (at most 366 days); omitted: never',
    },
  },
} as const;
const parseIssue = compileValidator<IssueTokenRequest>(ISSUE_TOKEN_SCHEMA, 'token request');

function administrator(ctx: Context): string {
  const principal = ctx.state.principal as Principal | undefined;
  if (principal === undefined) {
    ctx.set('WWW-Authenticate', 'Bearer');
    throw new UnauthorizedError(
      'managing access tokens needs the control token (set SVC_API_TOKEN) or a validated edge identity',
      { code: 'missing_credentials' },
    );
  }
  if (!isAdministrator(principal))
    throw new ForbiddenError('a scoped token cannot manage access tokens', {
      code: 'insufficient_scope',
      details: { path: ctx.path },
    });
  return principal.kind === 'edge-identity' ? (principal.email ?? principal.subject) : 'control-token';
}

export function scopedTokensRoutes(tokens: ScopedTokens): Router {
  const router = new Router();
  router.post('/api/access/tokens', (ctx) => {
    const by = administrator(ctx);
    const issued = tokens.issue(parseIssue(ctx.request.body ?? {}), by);
    ctx.status = 201;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { token: issued, note: 'the token value is shown only in this response; store it now' };
  });
  router.get('/api/access/tokens', (ctx) => {
    administrator(ctx);
    ctx.body = { tokens: tokens.list() };
  });
  router.get('/api/access/tokens/:id', (ctx) => {
    administrator(ctx);
    const token = tokens.get(ctx.params.id!);
    if (token === undefined)
      throw new NotFoundError(`no access token ${ctx.params.id}`, {
        code: 'token_not_found',
        details: { id: ctx.params.id },
      });
    ctx.body = { token };
  });
  router.delete('/api/access/tokens/:id', (ctx) => {
    administrator(ctx);
    ctx.body = { token: tokens.revoke(ctx.params.id!) };
  });
  return router;
}
