/**
 * Route entries of the control plane's access tokens, audit receipts, observability, operator views,
 * platform lane and backups, and external admission.
 */
import { ISSUE_TOKEN_SCHEMA } from '../../control/auth/scoped-tokens-routes.js';
import { parseInstall } from '../../control/observability/observability-routes.js';
import {
  PLATFORM_LANE_REQUEST_SCHEMA,
  emptyBody as emptyLaneBody,
} from '../../control/operations/platform-lane-routes.js';
import { PLATFORM_BACKUP_REQUEST_SCHEMA } from '../../control/operations/platform-backup-routes.js';
import type { RouteDocGroup } from '../route-doc.js';

const laneBody = { name: 'PlatformLaneRequest', schema: PLATFORM_LANE_REQUEST_SCHEMA };

export const ACCESS_ROUTE_DOCS: RouteDocGroup = {
  tag: 'access-tokens',
  description: 'Scoped access tokens, issued by an administrator, shown once, kept as SHA-256, revocable.',
  routes: {
    'POST /api/access/tokens': {
      summary: 'Issues a scoped token; the `svc_pat_...` secret is shown once',
      body: { name: 'IssueTokenRequest', schema: ISSUE_TOKEN_SCHEMA },
      answer: { status: 201, schema: 'IssuedTokenAnswer' },
    },
    'GET /api/access/tokens': {
      summary: 'Issued tokens without their secrets',
      answer: { schema: 'TokenList' },
    },
    'GET /api/access/tokens/{id}': {
      summary: 'One issued token without its secret',
      answer: { schema: 'TokenAnswer' },
    },
    'DELETE /api/access/tokens/{id}': {
      summary: 'Revokes a token at once (idempotent)',
      answer: { schema: 'TokenAnswer' },
    },
  },
};

export const AUDIT_ROUTE_DOCS: RouteDocGroup = {
  tag: 'audit',
  description: 'Signed, hash-chained receipts reserved before every mutation (production profile).',
  routes: {
    'GET /api/v1/audit/receipts': {
      summary: 'Audit receipts, newest first',
      query: [
        { name: 'limit', description: 'At most this many (default 100, ≤ 1000).' },
        { name: 'offset', description: 'Skip this many.' },
        { name: 'target', description: 'Only receipts of this target.' },
      ],
      answer: { description: '`{ receipts }`.' },
    },
    'GET /api/v1/audit/verify': {
      summary: "The receipt chain's verdict: ok, receipts, open, problems, head and public key",
      answer: { description: 'The verdict.' },
    },
  },
};

export const OBSERVABILITY_ROUTE_DOCS: RouteDocGroup = {
  tag: 'observability',
  description: 'Generated Prometheus scrape configuration and alert rules, a starter bundle and tuning advice.',
  routes: {
    'GET /api/observability/scrape-config.yml': {
      summary: 'The generated Prometheus scrape configuration (YAML)',
      answer: { contentType: 'text/yaml', schema: { type: 'string' }, description: 'YAML.' },
    },
    'GET /api/observability/alerts.yml': {
      summary: 'The generated Prometheus alert rules (YAML)',
      answer: { contentType: 'text/yaml', schema: { type: 'string' }, description: 'YAML.' },
    },
    'GET /api/observability/bundle': {
      summary: 'A value-safe starter bundle of observability files',
      answer: { description: '`{ valueSafe, files, skippedAlertRules, tokenFile, notes }`.' },
    },
    'POST /api/observability/services/install': {
      summary: 'Writes the managed metrics store, dashboard and container metrics apps into the apps folder',
      body: { name: 'InstallObservabilityRequest', schema: parseInstall.schema, optional: true },
      answer: { description: 'What was written or would be.' },
      errors: [409],
    },
    'GET /api/tuning/recommendations': {
      summary: 'Advisory right-sizing recommendations; never changes a job',
      query: [
        { name: 'app', description: 'Only this app.' },
        { name: 'status', description: 'Only this sizing status.' },
      ],
      answer: { description: '`{ recommendations }`.' },
    },
  },
};

export const OPERATOR_ROUTE_DOCS: RouteDocGroup = {
  tag: 'operator',
  description: 'Read-only operator views and platform rollups.',
  routes: {
    'GET /api/operator/inbox': {
      summary: 'What needs attention: incidents, failed operations, deploy, cron and snapshot risks, secrets',
      query: [
        { name: 'app', description: 'Only this app.' },
        { name: 'limit', description: 'At most this many items per list.' },
      ],
      answer: { description: 'The inbox.' },
    },
    'GET /api/operator/cron': {
      summary: 'Every scheduled process: schedule in force, time zone, next and last run, action paths',
      query: [{ name: 'app', description: 'Only this app.' }],
      answer: { schema: 'OperatorCron' },
    },
    'GET /api/operator/deploy-confidence': {
      summary: 'Per app: deploy confidence with reasons, recent deployments, canaries and rollback policy',
      query: [
        { name: 'app', description: 'Only this app.' },
        { name: 'limit', description: 'At most this many recent deployments.' },
      ],
      answer: { schema: 'DeployConfidenceAnswer' },
    },
    'GET /api/operator/auth-hints': {
      summary: 'Configured auth mechanisms, public routes and how to pass a token (never a secret)',
      answer: { schema: 'AuthHintsAnswer' },
    },
    'GET /api/operator/actions': {
      summary: 'Operator action descriptors: method, path, body schema, risk, mobile-ready, confirmation',
      query: [
        { name: 'risk', description: 'Only this risk level.' },
        { name: 'mobileReady', description: 'Only mobile-ready actions (`true`).' },
      ],
      answer: { schema: 'ActionCatalogAnswer' },
    },
    'GET /api/ops/platform': {
      summary: 'Platform rollup: build, apps, operations, incidents and snapshot totals',
      answer: { description: 'The rollup.' },
    },
    'GET /api/secrets/migration-plan': {
      summary: 'Per secret key: location, declared, present, encrypted and the recommended action (never values)',
      query: [{ name: 'app', description: 'Only this app.' }],
      answer: { schema: 'SecretPlanAnswer' },
    },
    'GET /api/v1/production/readiness': {
      summary: 'Production admission checks, each pass or fail with a reason, and `ready`',
      answer: { schema: 'ProductionReadinessAnswer' },
    },
    'GET /api/platform/releases': {
      summary: 'Platform builds seen, releases on disk and `platform.*` operations',
      query: [{ name: 'limit', description: 'At most this many.' }],
      answer: { schema: 'PlatformReleasesAnswer' },
    },
  },
};

export const PLATFORM_ROUTE_DOCS: RouteDocGroup = {
  tag: 'platform',
  description: 'Upgrades, preflights and smoke runs of the platform itself, and platform backups.',
  routes: {
    'POST /api/platform/upgrade': {
      summary: 'Upgrades the platform from a release artifact, tag, built checkout or git ref',
      body: laneBody,
      answer: { status: 202, description: '`{ operation, agentStarted }`.' },
      idempotencyKey: 'optional',
      errors: [409],
    },
    'POST /api/platform/preflight': {
      summary: 'Checks a platform upgrade source without switching to it',
      body: laneBody,
      answer: { status: 202, description: '`{ operation, agentStarted }`.' },
      idempotencyKey: 'optional',
      errors: [409],
    },
    'POST /api/platform/smoke': {
      summary: 'Runs the smoke checks of the running platform',
      body: { name: 'PlatformSmokeRequest', schema: emptyLaneBody.schema, optional: true },
      answer: { status: 202, description: '`{ operation, agentStarted }`.' },
      idempotencyKey: 'optional',
      errors: [409],
    },
    'GET /api/platform/operations/{id}': {
      summary: 'One lane operation with its upgrade record and steps',
      answer: { description: 'The operation, its upgrade record and its steps.' },
    },
    'POST /api/v1/platform/backups': {
      summary: 'Writes and verifies a platform backup',
      body: { name: 'PlatformBackupRequest', schema: PLATFORM_BACKUP_REQUEST_SCHEMA, optional: true },
      answer: { status: 201, description: '`{ backup }`.' },
      idempotencyKey: 'optional',
      errors: [409],
    },
    'GET /api/v1/platform/backups': {
      summary: 'Platform backups, newest first, with their verification',
      query: [{ name: 'limit', description: 'At most this many (1-1000).' }],
      answer: { description: '`{ backups }`.' },
    },
    'GET /api/v1/platform/backups/remote': {
      summary: 'Platform backup archives in the S3-compatible bucket',
      answer: { description: 'The archives.' },
    },
    'GET /api/v1/platform/backups/{id}': { summary: 'One platform backup', answer: { description: '`{ backup }`.' } },
  },
};

const admissionBody = {
  name: 'ExternalAdmissionRequest',
  schema: { type: 'object', description: 'The admission step input.' },
};
const admission = (summary: string, status = 200) => ({
  summary,
  description:
    'Restricted mode with the external-admission bridge; the full control plane answers 503 (no verifier). Only a workload token with `fleet:external-admission` reaches it.',
  body: admissionBody,
  answer: { status, description: 'The admission step result (`Cache-Control: no-store`).' },
  idempotencyKey: 'required' as const,
  errors: [409, 503],
});

export const ADMISSION_ROUTE_DOCS: RouteDocGroup = {
  tag: 'external-admission',
  description: 'External admission of deployments built elsewhere (served in restricted mode).',
  routes: {
    'POST /api/v1/apps/{id}/external-deployments/begin': admission(
      'Begins an external admission (201 with the one-time nonce)',
      201,
    ),
    'POST /api/v1/apps/{id}/external-deployments/admit': admission(
      'Admits an external deployment (201 with the operation)',
      201,
    ),
    'POST /api/v1/apps/{id}/external-deployments/resume': admission('Resumes an interrupted external admission'),
    'POST /api/v1/apps/{id}/external-deployments/reconcile': admission('Reconciles an external admission'),
    'POST /api/v1/apps/{id}/external-deployments/cleanup': admission('Cleans up an external admission'),
    'POST /api/v1/apps/{id}/external-deployments': admission('Deprecated alias of `admit`', 201),
    'GET /api/v1/apps/{id}/external-deployments/context/{admissionId}': {
      summary: 'The context of one external admission',
      answer: { description: 'The admission context (`Cache-Control: no-store`).' },
      errors: [503],
    },
  },
};
