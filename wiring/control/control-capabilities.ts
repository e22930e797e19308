/**
 * The capabilities the full control plane serves (`GET /api/v1/capabilities`): each names its routes
 * and says what it does; the operator's advertised routes are derived from this list.
 */
import type { Capability } from '../../api/control/server/meta-routes.js';
import { EVENT_CAPABILITIES } from './event-api.js';
import { DEPLOY_CAPABILITIES } from '../../api/control/operations/deploy-api.js';
import { ROUTING_CAPABILITIES } from '../../api/control/routing/routing-routes.js';
import { FUNCTIONS_CAPABILITY } from '../../api/control/jobs/functions-routes.js';
import { OBSERVABILITY_CAPABILITY } from '../../api/control/observability/observability-routes.js';
import { OPERATOR_CAPABILITIES } from '../../api/control/operator/operator-routes.js';
import { PLATFORM_LANE_CAPABILITY } from '../../api/control/operations/platform-lane-routes.js';
import { EXEC_CAPABILITY } from '../../api/control/exec/exec-routes.js';
import { DEVICE_CAPABILITY } from '../../api/control/exec/device-routes.js';
import { PLATFORM_BACKUP_CAPABILITY } from '../../api/control/operations/platform-backup-routes.js';

/** Capabilities this build serves; each later capability appends its own entry. */
export const CONTROL_CAPABILITIES: readonly Capability[] = [
  {
    name: 'meta',
    routes: ['GET /api/health', 'GET /api/version', 'GET /api/v1/capabilities'],
    description: 'Health, version and capability discovery.',
  },
  {
    name: 'apps',
    routes: [
      'GET /api/apps',
      'GET /api/apps/{id}',
      'GET /api/services/manifest',
      'GET /api/v1/services/manifest',
      'GET /api/resources/suggestions',
    ],
    description:
      'Discovered apps with conditions and runtime status, reconciled continuously against the local scheduler.',
  },
  {
    name: 'spec-validation',
    routes: ['GET /api/validate', 'POST /api/v1/validate/infraspec'],
    description: 'Validation of infraspec.yaml against its JSON Schema and semantic rules, with line and column.',
  },
  {
    name: 'openapi',
    routes: ['GET /api/openapi.json'],
    description: 'The OpenAPI 3.1 description of this API, generated from its routers, public (ADR 0230).',
  },
  {
    name: 'spec-schemas',
    routes: [
      'GET /schemas/',
      'GET /schemas/infraspec.schema.json',
      'GET /schemas/deploy-group.schema.json',
      'GET /schemas/fleet.schema.json',
    ],
    description: 'The spec JSON Schemas at a stable public URL, for editor modelines in any folder.',
  },
  ...EVENT_CAPABILITIES,
  ...DEPLOY_CAPABILITIES,
  ...ROUTING_CAPABILITIES,
  {
    name: 'snapshots',
    routes: [
      'GET /api/v1/apps/{id}/snapshots',
      'POST /api/v1/apps/{id}/snapshots',
      'POST /api/v1/apps/{id}/snapshots/{filename}/restore',
      'GET /api/v1/apps/{id}/snapshots/retention',
      'POST /api/v1/apps/{id}/snapshots/retention',
      'POST /api/v1/apps/{id}/migrations',
      'POST /api/v1/apps/{id}/snapshots/export',
      'GET /api/v1/apps/{id}/snapshots/remote',
      'POST /api/v1/apps/{id}/snapshots/import',
      'POST /api/apps/{id}/snapshots/restore',
      'GET /api/operator/snapshot-readiness',
    ],
    description:
      'PostgreSQL snapshots of app-owned databases: durable snapshot, restore, retention pruning and migration operations, the retention preview, S3 export and import.',
  },
  {
    name: 'access-tokens',
    routes: [
      'POST /api/access/tokens',
      'GET /api/access/tokens',
      'GET /api/access/tokens/{id}',
      'DELETE /api/access/tokens/{id}',
    ],
    description:
      'Scoped access tokens (events:read, metrics:read, logs:read): issued by an administrator, shown once, kept as SHA-256, revocable.',
  },
  {
    name: 'audit-receipts',
    routes: ['GET /api/v1/audit/receipts', 'GET /api/v1/audit/verify'],
    description:
      'Production profile: Ed25519-signed, hash-chained receipts reserved before every mutation; a mutation whose receipt cannot be written does not happen (ADR 0187).',
  },
  {
    name: 'cron',
    routes: [
      'POST /api/apps/{id}/cron/trigger',
      'POST /api/apps/{id}/cron/pause',
      'POST /api/apps/{id}/cron/resume',
      'PUT /api/apps/{id}/cron/schedule',
    ],
    description: 'Operator actions on periodic processes, each emitting its job.* event.',
  },
  {
    name: 'logs',
    routes: ['GET /api/v1/apps/{id}/logs'],
    description:
      "Every allocation's stdout and stderr, kept per app (size and age bounds): filters, text search, follow=true as Server-Sent Events (scope logs:read).",
  },
  FUNCTIONS_CAPABILITY,
  OBSERVABILITY_CAPABILITY,
  ...OPERATOR_CAPABILITIES,
  PLATFORM_LANE_CAPABILITY,
  EXEC_CAPABILITY,
  DEVICE_CAPABILITY,
  PLATFORM_BACKUP_CAPABILITY,
];
