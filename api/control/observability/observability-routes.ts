/**
 * Observability routes: the generated scrape config and alert rules, the starter bundle, the install
 * of the managed observability apps, and advisory tuning recommendations.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { compileValidator } from '../../../domain/json-schema.js';
import { MANAGED_SERVICE_NAMES, SizingStatus, type ManagedServiceName } from '../../../domain/observability/index.js';
import type { ObservabilityService } from '../../../controllers/observability/index.js';
import type { IdempotencyKeys } from '../../../controllers/operations/index.js';
import { idempotency } from '../../http/idempotency.js';
import type { Capability } from '../server/meta-routes.js';

const YAML_TYPE = 'application/yaml; charset=utf-8';

export const parseInstall = compileValidator<{ force?: boolean; dryRun?: boolean; services?: ManagedServiceName[] }>(
  {
    type: 'object',
    additionalProperties: false,
    properties: {
      force: { type: 'boolean', description: "overwrite the install's files in folders an operator edited" },
      dryRun: { type: 'boolean', description: 'report the plan, write nothing' },
      services: {
        type: 'array',
        minItems: 1,
        uniqueItems: true,
        items: { enum: [...MANAGED_SERVICE_NAMES] },
        description: 'which managed apps (default all)',
      },
    },
  },
  'install request',
);

const parseTuningQuery = compileValidator<{ app?: string; status?: SizingStatus }>(
  {
    type: 'object',
    additionalProperties: false,
    properties: {
      app: { type: 'string', minLength: 1, maxLength: 63 },
      status: { enum: Object.values(SizingStatus) },
    },
  },
  'query',
);

/** Query parameters as single strings (a repeated parameter stays an array, which the schema refuses). */
function query(ctx: Context): Record<string, unknown> {
  return { ...ctx.query };
}

/** `GET /api/observability/scrape-config.yml`, `/alerts.yml`, `/bundle`, `POST /services/install`, `GET /api/tuning/recommendations`. */
export function observabilityRoutes(service: ObservabilityService, keys: IdempotencyKeys): Router {
  const router = new Router();
  router.get('/api/observability/scrape-config.yml', async (ctx) => {
    ctx.type = YAML_TYPE;
    ctx.body = await service.scrapeConfig();
  });
  router.get('/api/observability/alerts.yml', (ctx) => {
    ctx.type = YAML_TYPE;
    ctx.body = service.alertRules().yaml;
  });
  router.get('/api/observability/bundle', async (ctx) => {
    ctx.body = { valueSafe: true, ...(await service.bundle()) };
  });
  router.post('/api/observability/services/install', idempotency({ keys }), async (ctx) => {
    const raw = ctx.request.body;
    ctx.body = await service.install(parseInstall(raw === undefined || raw === null ? {} : raw));
  });
  router.get('/api/tuning/recommendations', async (ctx) => {
    ctx.body = await service.tuningRecommendations(parseTuningQuery(query(ctx)));
  });
  return router;
}

/** The capability observability adds to `GET /api/v1/capabilities`. */
export const OBSERVABILITY_CAPABILITY: Capability = {
  name: 'observability',
  routes: [
    'GET /api/observability/scrape-config.yml',
    'GET /api/observability/alerts.yml',
    'GET /api/observability/bundle',
    'POST /api/observability/services/install',
    'GET /api/tuning/recommendations',
  ],
  description:
    'Generated metrics store scrape config and alert rules, a value-safe starter bundle, the managed metrics store, dashboard and container-metrics apps, and advisory tuning.',
};
