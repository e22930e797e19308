/**
 * Routing routes: the active tunnel ingress and per-hostname endpoint toggles.
 */
import Router from '@koa/router';
import { compileValidator } from '../../../domain/json-schema.js';
import type { Routing } from '../../../controllers/routing/routing.js';
import type { Capability } from '../server/meta-routes.js';

interface ToggleBody {
  readonly hostname: string;
  readonly enabled: boolean;
}

/** The body of `POST /api/apps/{id}/endpoints/toggle`. */
export const ENDPOINT_TOGGLE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['hostname', 'enabled'],
  properties: { hostname: { type: 'string', minLength: 1, maxLength: 253 }, enabled: { type: 'boolean' } },
} as const;
const validateToggle = compileValidator<ToggleBody>(ENDPOINT_TOGGLE_SCHEMA);

/** `GET /api/tunnel/ingress`, `POST /api/apps/:id/endpoints/toggle`. */
export function routingRoutes(routing: Routing): Router {
  const router = new Router();
  router.get('/api/tunnel/ingress', (ctx) => {
    const state = routing.state();
    const toggles = routing.toggles();
    ctx.body = {
      tunnel: state.config?.tunnel ?? null,
      file: state.file,
      hostnames: state.rules.map((r) => r.hostname),
      rules: state.rules.map((r) => ({
        hostname: r.hostname,
        service: r.service,
        app: r.app,
        process: r.process,
        viaGateway: r.viaGateway,
      })),
      ingress: state.config?.ingress ?? [],
      disabled: toggles
        .filter((t) => !t.enabled)
        .map((t) => ({ app: t.app, hostname: t.hostname, updatedAt: t.updatedAt })),
      lastReconciledAt: state.lastReconciledAt ?? null,
      lastChangedAt: state.lastChangedAt ?? null,
      lastReload: state.lastReload
        ? { ok: state.lastReload.ok, exitCode: state.lastReload.exitCode, at: state.lastReload.at }
        : null,
      lastError: state.lastError ?? null,
    };
  });
  router.post('/api/apps/:id/endpoints/toggle', async (ctx) => {
    const body = validateToggle(ctx.request.body);
    ctx.body = await routing.toggle(ctx.params.id!, body.hostname, body.enabled);
  });
  return router;
}

/** Capabilities routing adds to `GET /api/v1/capabilities`. */
export const ROUTING_CAPABILITIES: readonly Capability[] = [
  {
    name: 'routing',
    routes: ['GET /api/tunnel/ingress', 'POST /api/apps/{id}/endpoints/toggle'],
    description:
      'Edge tunnel config reconciled from deployable, healthy apps (catch-all last, atomic writes, drift corrected), with per-hostname toggles.',
  },
  {
    name: 'wake-gateway',
    routes: [
      'ANY /api/wake-gateway/{hostname}/{path}',
      'ANY / (Host of a public endpoint)',
      'GET /api/operator/wake-targets',
    ],
    description:
      'Streaming reverse proxy for public endpoints that scales gateway-managed processes (scaling.min 0) up from zero and back down when idle.',
  },
  {
    name: 'access-patterns',
    routes: ['GET /api/access/patterns', 'POST /api/access/edge/logpush', 'POST /api/access/edge/sync'],
    description:
      'Hourly request counts and status buckets per public hostname from the gateway, edge log push and the edge analytics sync.',
  },
];
