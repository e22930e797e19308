/**
 * The deploy capability's HTTP surface: its routers (deploys, operations, webhooks) with the
 * Idempotency-Key middleware on every mutation, and its capability entries.
 */
import type Router from '@koa/router';
import type { Deploys } from '../../../controllers/pipeline/index.js';
import { idempotency } from '../../http/idempotency.js';
import type { Capability } from '../server/meta-routes.js';
import { deployRoutes } from './deploy-routes.js';
import { operationsRoutes } from './operations-routes.js';
import { versionedRollbackRoutes } from './rollback-routes.js';
import { webhooksRoutes } from './webhooks-routes.js';

/** Capability entries of durable operations, the deploy pipeline and push webhooks. */
export const DEPLOY_CAPABILITIES: readonly Capability[] = [
  {
    name: 'operations',
    routes: ['GET /api/v1/operations/{id}', 'GET /api/operations/active', 'POST /api/v1/operations/{id}/cancel'],
    description:
      'Durable operations claimed by a worker under a lease, serialized per app, recovered after a crash; Idempotency-Key on mutations.',
  },
  {
    name: 'deploys',
    routes: [
      'POST /api/apps/{id}/deploy',
      'POST /api/apps/{id}/preflight',
      'POST /api/apps/{id}/rollback',
      'POST /api/v1/apps/{id}/rollback',
      'POST /api/apps/{id}/canary/promote',
      'POST /api/deploy-groups/{name}/deploy',
      'GET /api/v1/deployments',
      'GET /api/v1/deployments/{id}/steps',
      'GET /api/saga/{sagaId}',
    ],
    description:
      'The deploy pipeline (validate, clone, inspect, build, test, snapshot, migrate, submit, healthy, forge, cleanup), rollbacks, canaries and deploy groups.',
  },
  {
    name: 'webhooks',
    routes: ['POST /api/webhooks/github', 'POST /api/webhooks/generic', 'GET /api/webhooks/deliveries'],
    description:
      'Signed git-host push webhooks (SVC_WEBHOOK_SECRET) deploying apps with repo.autoDeploy; the delivery inbox.',
  },
];

/** The routers of the deploy capability. */
export function deployRouters(deploys: Deploys, options: { readonly protectInbox: boolean }): Router[] {
  const idempotent = idempotency({ keys: deploys.idempotencyKeys });
  return [
    deployRoutes(deploys.deploys, idempotent),
    versionedRollbackRoutes(deploys.deploys, deploys.idempotencyKeys),
    operationsRoutes(deploys.operations, idempotent),
    webhooksRoutes(deploys.webhooks, options),
  ];
}
