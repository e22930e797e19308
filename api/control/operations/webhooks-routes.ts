/**
 * Webhook routes: the public push receivers (`/api/webhooks/github`, `/api/webhooks/generic`,
 * verified by signature, not by bearer token) and the inbox `GET /api/webhooks/deliveries`.
 */
import Router from '@koa/router';
import { ForbiddenError, UnauthorizedError, ValidationError } from '../../../domain/errors.js';
import { isAdministrator, type Principal } from '../../../domain/auth/index.js';
import { wholeNumberQuery } from '../../http/whole-number-query.js';
import type { WebhookReceiver } from '../../../controllers/webhooks/index.js';

/**
 * The webhook routes. The receivers are public (the signature authenticates them); the inbox shows
 * payloads and is protected like any other route when a control token is configured.
 */
export function webhooksRoutes(receiver: WebhookReceiver, options: { readonly protectInbox: boolean }): Router {
  const router = new Router();
  router.post('/api/webhooks/:provider', (ctx) => {
    const provider = ctx.params.provider;
    if (provider !== 'github' && provider !== 'generic')
      throw new ValidationError(`webhook provider "${provider}" is not supported (github, generic)`, {
        code: 'unsupported_provider',
      });
    const raw =
      (ctx.request as { rawBody?: string }).rawBody ?? (typeof ctx.request.body === 'string' ? ctx.request.body : '');
    const headers: Record<string, string | undefined> = {};
    for (const [name, value] of Object.entries(ctx.headers)) headers[name] = Array.isArray(value) ? value[0] : value;
    const delivery = receiver.receive({ provider, headers, rawBody: raw });
    ctx.status = delivery.status === 'deployed' ? 202 : 200;
    ctx.body = { delivery: { ...delivery, payload: undefined } };
  });
  router.get('/api/webhooks/deliveries', (ctx) => {
    if (options.protectInbox && ctx.state.principal === undefined) {
      ctx.set('WWW-Authenticate', 'Bearer');
      throw new UnauthorizedError('the webhook inbox needs Authorization: Bearer <token>', {
        code: 'missing_credentials',
      });
    }
    if (options.protectInbox && !isAdministrator(ctx.state.principal as Principal)) {
      throw new ForbiddenError('a scoped token cannot read the webhook inbox; use the control token', {
        code: 'insufficient_scope',
        details: { path: ctx.path },
      });
    }
    ctx.body = {
      deliveries: receiver.deliveries({
        limit: wholeNumberQuery(ctx.query.limit, 'limit', 50, 200),
        offset: wholeNumberQuery(ctx.query.offset, 'offset', 0, 1_000_000),
      }),
    };
  });
  return router;
}
