/**
 * Read-only operator views and platform rollups: `GET /api/operator/inbox`, `/cron`,
 * `/deploy-confidence`, `/auth-hints`, `/actions`, `GET /api/ops/platform`,
 * `GET /api/secrets/migration-plan`, `GET /api/v1/production/readiness`, `GET /api/platform/releases`.
 *
 * Each handler validates its query (unknown or repeated parameters are a 400 `invalid_query`),
 * calls the operator service and answers `Cache-Control: no-store`. A last guard replaces any
 * configured secret value that would still reach a response (none should: the service holds none).
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import type { OperatorService } from '../../../controllers/operator/index.js';
import {
  parseOperatorQuery,
  scrubSecretValues,
  type ActionRisk,
  type ActionSchemas,
  type OperatorView,
  type ParsedQuery,
} from '../../../domain/operator/index.js';
import { INCIDENT_ACTION_SCHEMA } from '../events/events-schemas.js';
import { actionSchema as CRON_ACTION_SCHEMA } from '../jobs/cron-routes.js';
import { CANARY_PROMOTE_SCHEMA, DEPLOY_REQUEST_SCHEMA, ROLLBACK_REQUEST_SCHEMA } from '../operations/deploy-routes.js';
import { SNAPSHOT_RESTORE_SCHEMA, SNAPSHOT_TAKE_SCHEMA } from '../operations/snapshots-routes.js';
import { ENDPOINT_TOGGLE_SCHEMA } from '../routing/routing-routes.js';
import type { Capability } from '../server/meta-routes.js';
import { isPublicPath } from '../auth/auth.js';

/** Capabilities of the operator views and platform rollups. */
export const OPERATOR_CAPABILITIES: readonly Capability[] = [
  {
    name: 'operator-views',
    routes: [
      'GET /api/operator/inbox',
      'GET /api/operator/cron',
      'GET /api/operator/deploy-confidence',
      'GET /api/operator/auth-hints',
      'GET /api/operator/actions',
    ],
    description:
      'Read-only operator views: an inbox of what needs attention, scheduled processes, deploy confidence, secret-safe auth hints and action descriptors with risk levels.',
  },
  {
    name: 'platform-rollups',
    routes: [
      'GET /api/ops/platform',
      'GET /api/secrets/migration-plan',
      'GET /api/v1/production/readiness',
      'GET /api/platform/releases',
    ],
    description:
      'Platform rollup with snapshot totals, the secret migration plan (never values), the production admission summary and the platform release history.',
  },
];

/** The body schemas of the routes the action catalog describes, taken from their validators. */
export const OPERATOR_ACTION_SCHEMAS: ActionSchemas = {
  incidentAction: INCIDENT_ACTION_SCHEMA,
  cronAction: CRON_ACTION_SCHEMA,
  deploy: DEPLOY_REQUEST_SCHEMA,
  rollback: ROLLBACK_REQUEST_SCHEMA,
  snapshotRestore: SNAPSHOT_RESTORE_SCHEMA,
  snapshotTake: SNAPSHOT_TAKE_SCHEMA,
  canaryPromote: CANARY_PROMOTE_SCHEMA,
  endpointToggle: ENDPOINT_TOGGLE_SCHEMA,
};

/** Routes that need a caller only when SVC_REQUIRE_EXPLICIT_AUTH=true (see `auth.ts`). */
export { EXPLICIT_AUTH_ONLY_ROUTES } from '../auth/auth.js';

/** Every route `capabilities` advertise, with whether the auth middleware treats it as public. */
export function advertisedRoutes(capabilities: readonly Capability[]): { route: string; public: boolean }[] {
  return capabilities
    .flatMap((c) => c.routes)
    .map((route) => ({ route, public: isPublicPath(route.split(' ')[1] ?? '') }));
}

export interface OperatorRoutesOptions {
  /** Values of the configured secrets, searched for in every answer. */
  readonly secretValues: readonly string[];
}

/** The operator routers. */
export function operatorRoutes(service: OperatorService, options: OperatorRoutesOptions): Router {
  const router = new Router();
  const view = (name: OperatorView, answer: (query: ParsedQuery) => unknown) => async (ctx: Context) => {
    const query = parseOperatorQuery(name, ctx.query);
    const body = await answer(query);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = scrubSecretValues(body, options.secretValues);
  };
  const app = (q: ParsedQuery) => (typeof q.app === 'string' ? { app: q.app } : {});
  router.get(
    '/api/operator/inbox',
    view('inbox', (q) => service.inbox({ ...app(q), limit: q.limit as number })),
  );
  router.get(
    '/api/operator/cron',
    view('cron', (q) => service.cron(app(q))),
  );
  router.get(
    '/api/operator/deploy-confidence',
    view('deployConfidence', (q) => service.deployConfidence({ ...app(q), limit: q.limit as number })),
  );
  router.get(
    '/api/operator/auth-hints',
    view('authHints', () => service.authHints()),
  );
  router.get(
    '/api/operator/actions',
    view('actions', (q) =>
      service.actions({
        ...(typeof q.risk === 'string' ? { risk: q.risk as ActionRisk } : {}),
        ...(typeof q.mobileReady === 'string' ? { mobileReady: q.mobileReady === 'true' } : {}),
      }),
    ),
  );
  router.get(
    '/api/ops/platform',
    view('platform', () => service.platform()),
  );
  router.get(
    '/api/secrets/migration-plan',
    view('secretsPlan', (q) => service.secretsPlan(app(q))),
  );
  router.get(
    '/api/v1/production/readiness',
    view('productionReadiness', () => service.productionReadiness()),
  );
  router.get(
    '/api/platform/releases',
    view('platformReleases', (q) => service.platformReleases({ limit: q.limit as number })),
  );
  return router;
}
