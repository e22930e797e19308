/**
 * Route entries of the control plane's deploys, durable operations, push webhooks and snapshots.
 */
import {
  CANARY_PROMOTE_SCHEMA,
  DEPLOY_REQUEST_SCHEMA,
  ROLLBACK_REQUEST_SCHEMA,
} from '../../control/operations/deploy-routes.js';
import {
  SNAPSHOT_RESTORE_SCHEMA,
  SNAPSHOT_TAKE_SCHEMA,
  parseImport,
  parseLegacyRestore,
  parseMigration,
  parseRetention,
} from '../../control/operations/snapshots-routes.js';
import type { RouteDocGroup } from '../route-doc.js';

const page = [
  {
    name: 'limit',
    description: 'At most this many (≤ 200, default 50).',
    schema: { type: 'string', pattern: '^\\d+$' },
  },
  { name: 'offset', description: 'Skip this many.', schema: { type: 'string', pattern: '^\\d+$' } },
];
const deployBody = { name: 'DeployRequest', schema: DEPLOY_REQUEST_SCHEMA, optional: true };

export const DEPLOYS_ROUTE_DOCS: RouteDocGroup = {
  tag: 'deploys',
  description: 'Deploys, preflights, rollbacks, canary promotion and deploy groups, each a durable operation.',
  routes: {
    'POST /api/apps/{id}/deploy': {
      summary: 'Deploys the app at a ref (default HEAD) as a durable operation',
      body: deployBody,
      answer: { status: 202, schema: 'DeployAccepted' },
      idempotencyKey: 'optional',
      errors: [409],
    },
    'POST /api/apps/{id}/preflight': {
      summary: 'Runs the deploy checks at a ref without deploying',
      body: deployBody,
      answer: { status: 202, schema: 'DeployAccepted' },
      idempotencyKey: 'optional',
      errors: [409],
    },
    'POST /api/apps/{id}/rollback': {
      summary: 'Rolls the app back to the last release that succeeded',
      body: { name: 'RollbackRequest', schema: ROLLBACK_REQUEST_SCHEMA, optional: true },
      answer: { status: 202, schema: 'DeployAccepted' },
      idempotencyKey: 'optional',
      errors: [409],
    },
    'POST /api/v1/apps/{id}/rollback': {
      summary: 'Rolls the app back to the last release that succeeded, under the versioned conventions',
      body: { name: 'RollbackRequest', schema: ROLLBACK_REQUEST_SCHEMA, optional: true },
      answer: { status: 202, schema: 'DeployAccepted' },
      idempotencyKey: 'required',
      errors: [409],
    },
    'POST /api/apps/{id}/canary/promote': {
      summary: 'Promotes the canaries waiting for evaluation now',
      body: { name: 'CanaryPromoteRequest', schema: CANARY_PROMOTE_SCHEMA, optional: true },
      answer: { description: '`{ promoted: [jobId] }`.' },
      idempotencyKey: 'optional',
      errors: [409],
    },
    'POST /api/deploy-groups/{name}/deploy': {
      summary: 'Deploys every app of a deploy group in its `waitReady` order',
      body: deployBody,
      answer: { status: 202, description: '`{ group, deployments }`: one saga and operation per app.' },
      idempotencyKey: 'optional',
    },
    'GET /api/v1/deployments': {
      summary: 'Deployment history, newest first',
      query: [
        { name: 'app', description: 'Only this app.' },
        { name: 'kind', description: 'Only this kind of deployment.' },
        { name: 'status', description: 'Only this status.' },
        ...page,
      ],
      answer: { schema: 'DeploymentList' },
    },
    'GET /api/v1/deployments/{id}/steps': {
      summary: 'The steps and region rows of one deployment',
      answer: { schema: 'DeploymentSteps' },
    },
    'GET /api/saga/{sagaId}': {
      summary: 'A deploy saga: deployment, operation, attempts, steps and timeline',
      answer: { description: 'The saga view.' },
    },
  },
};

export const OPERATIONS_ROUTE_DOCS: RouteDocGroup = {
  tag: 'operations',
  description: 'Durable operations and the push webhooks that start deploys.',
  routes: {
    'GET /api/v1/operations/{id}': {
      summary: 'One durable operation with its attempts',
      answer: { schema: 'OperationView' },
    },
    'GET /api/operations/active': {
      summary: 'The operation queue: active operations, counts and the drain state',
      answer: { schema: 'ActiveOperationsAnswer' },
    },
    'POST /api/v1/operations/{id}/cancel': {
      summary: 'Cancels a queued operation (409 once it runs)',
      answer: { schema: 'CancelledOperationAnswer' },
      errors: [409],
    },
    'POST /api/webhooks/{provider}': {
      summary: 'A push webhook (`github` or `generic`), verified with the webhook secret',
      description: 'The delivery is persisted first; 202 when it starts a deploy, 200 otherwise.',
      body: { name: 'WebhookPayload', schema: { type: 'object', description: "The provider's push payload." } },
      answer: { description: 'The delivery record.' },
    },
    'GET /api/webhooks/deliveries': {
      summary: 'The webhook inbox: every delivery with its match, saga and status',
      answer: { description: '`{ deliveries }`.' },
    },
  },
};

export const SNAPSHOTS_ROUTE_DOCS: RouteDocGroup = {
  tag: 'snapshots',
  description:
    'PostgreSQL snapshots of app-owned databases: snapshot, restore, migration, retention, S3 export and import.',
  routes: {
    'GET /api/v1/apps/{id}/snapshots': {
      summary: "Inventory of the app-owned database's snapshots",
      answer: { schema: 'SnapshotInventory' },
    },
    'POST /api/v1/apps/{id}/snapshots': {
      summary: 'Takes a snapshot as a durable operation (`app.snapshot`)',
      body: { name: 'SnapshotTakeRequest', schema: SNAPSHOT_TAKE_SCHEMA, optional: true },
      answer: { status: 202, schema: 'OperationAccepted' },
      idempotencyKey: 'required',
    },
    'POST /api/v1/apps/{id}/snapshots/{filename}/restore': {
      summary: 'Restores one snapshot as a durable operation (`app.snapshot-restore`)',
      body: { name: 'SnapshotRestoreRequest', schema: SNAPSHOT_RESTORE_SCHEMA },
      answer: { status: 202, schema: 'OperationAccepted' },
      idempotencyKey: 'required',
    },
    'GET /api/v1/apps/{id}/snapshots/retention': {
      summary: 'Retention preview: the newest `keep` kept, the older ones that would be pruned',
      query: [{ name: 'keep', description: 'How many to keep (default: the policy).' }],
      answer: { schema: 'RetentionPreviewAnswer' },
    },
    'POST /api/v1/apps/{id}/snapshots/retention': {
      summary: 'Applies retention as a durable operation (`app.snapshot-prune`): prunes the snapshots past `keep`',
      body: { name: 'SnapshotRetentionRequest', schema: parseRetention.schema },
      answer: { status: 202, schema: 'OperationAccepted' },
      idempotencyKey: 'required',
    },
    'POST /api/v1/apps/{id}/migrations': {
      summary: 'Runs the declared SQL migrations at a ref after a pre-migration snapshot (`app.migrate`)',
      body: { name: 'MigrationRequest', schema: parseMigration.schema },
      answer: { status: 202, schema: 'OperationAccepted' },
      idempotencyKey: 'required',
    },
    'POST /api/v1/apps/{id}/snapshots/export': {
      summary: 'Exports the latest dump to S3-compatible storage',
      body: { name: 'SnapshotExportRequest', schema: SNAPSHOT_TAKE_SCHEMA, optional: true },
      answer: { schema: 'RemoteSnapshotAnswer' },
      idempotencyKey: 'required',
    },
    'GET /api/v1/apps/{id}/snapshots/remote': {
      summary: "The app's exported snapshots in S3-compatible storage",
      answer: { schema: 'RemoteSnapshotList' },
    },
    'POST /api/v1/apps/{id}/snapshots/import': {
      summary: 'Imports a snapshot from S3-compatible storage by key, never overwriting',
      body: { name: 'SnapshotImportRequest', schema: parseImport.schema },
      answer: { status: 201, schema: 'ImportedSnapshotAnswer' },
      idempotencyKey: 'required',
      errors: [409],
    },
    'POST /api/apps/{id}/snapshots/restore': {
      summary: 'Legacy synchronous restore by filename or timestamp',
      body: { name: 'LegacySnapshotRestoreRequest', schema: parseLegacyRestore.schema },
      answer: { schema: 'RestoreAnswer' },
      errors: [409],
    },
    'GET /api/operator/snapshot-readiness': {
      summary: 'Per app-owned database: dumps, keep, overage, latest restore point, export and pre-restore policy',
      answer: { description: 'Readiness per app.' },
    },
  },
};
