// tier: quick
import test from 'ava';
import { ValidationError } from '../../domain/errors.js';
import type { Operation } from '../../domain/operations/index.js';
import {
  actionCatalog,
  assessDeployConfidence,
  authHints,
  buildInbox,
  containsSecretValue,
  describeCronProcess,
  durationText,
  evaluateReadiness,
  filterActions,
  formatInZone,
  parseOperatorQuery,
  planSecretMigration,
  platformReleaseHistory,
  redactCredentials,
  relativeText,
  rollupSnapshots,
  scrubSecretValues,
  standingFailures,
  type Confidence,
  type CronProcessFacts,
  type CronStatus,
  type DeployConfidenceFacts,
  type ReadinessFacts,
} from '../../domain/operator/index.js';

const NOW = Date.parse('2025-03-01T10:00:00Z');

test('parseOperatorQuery accepts known parameters, fills number defaults and refuses everything else with invalid_query', (t) => {
  t.deepEqual(parseOperatorQuery('inbox', {}), { limit: 50 });
  t.deepEqual(parseOperatorQuery('inbox', { app: 'web', limit: '7' }), { app: 'web', limit: 7 });
  t.deepEqual(parseOperatorQuery('actions', { risk: 'high', mobileReady: 'true' }), {
    risk: 'high',
    mobileReady: 'true',
  });
  const cases: [Parameters<typeof parseOperatorQuery>[0], Record<string, string | string[]>, RegExp][] = [
    ['inbox', { limit: '0' }, /limit: must be a whole number from 1 to 200/],
    ['inbox', { limit: '201' }, /limit: must be a whole number from 1 to 200/],
    ['inbox', { limit: '-1' }, /limit: must be a whole number from 1 to 200/],
    ['inbox', { limit: 'ten' }, /limit: must be a whole number from 1 to 200/],
    ['inbox', { limit: ['1', '2'] }, /limit: give it once/],
    ['inbox', { app: '../etc' }, /app: must be an app name/],
    ['inbox', { extra: '1' }, /extra: is not a parameter of this view/],
    ['authHints', { app: 'web' }, /app: is not a parameter of this view/],
    ['actions', { risk: 'extreme' }, /risk: must be one of low, medium, high/],
    ['actions', { mobileReady: 'yes' }, /mobileReady: must be true or false/],
    ['platformReleases', { limit: '501' }, /limit: must be a whole number from 1 to 500/],
  ];
  for (const [view, raw, message] of cases) {
    const error = t.throws(
      () => parseOperatorQuery(view, raw),
      { instanceOf: ValidationError, message },
      JSON.stringify(raw),
    );
    t.is(error?.code, 'invalid_query');
    t.true(Array.isArray(error?.details.problems));
  }
});

test('time text renders wall-clock time in a zone and relative durations', (t) => {
  const at = new Date('2025-03-01T03:00:00Z');
  t.is(formatInZone(at, 'UTC'), '2025-03-01 03:00 UTC');
  t.is(formatInZone(at, 'America/New_York'), '2025-02-28 22:00 EST');
  t.is(relativeText(NOW + 2 * 3_600_000 + 5 * 60_000, NOW), 'in 2h 5m');
  t.is(relativeText(NOW - 3 * 60_000, NOW), '3m ago');
  t.is(relativeText(NOW + 400, NOW), 'now');
  t.is(durationText(86_400_000 + 3_600_000), '1d 1h');
  t.is(durationText(3 * 3_600_000), '3h');
  t.is(durationText(42_000), '42s');
});

const cronFacts = (over: Partial<CronProcessFacts> = {}): CronProcessFacts => ({
  app: 'reports',
  process: 'nightly',
  deploy: true,
  released: true,
  specSchedule: '0 3 * * *',
  override: null,
  parents: [
    { jobId: 'reports-nightly', region: 'local', status: 'running', paused: false, cron: '0 3 * * *', children: [] },
  ],
  activeIncidents: 0,
  ...over,
});

test('describeCronProcess classifies each scheduled process and computes its next run with croner', (t) => {
  const scheduled = describeCronProcess(cronFacts(), NOW);
  t.is(scheduled.status, 'scheduled');
  t.is(scheduled.timeZone, 'UTC');
  t.deepEqual(scheduled.nextRun, { at: '2025-03-02T03:00:00.000Z', local: '2025-03-02 03:00 UTC', relative: 'in 17h' });
  t.is(scheduled.lastRun, null);
  t.deepEqual(scheduled.risks, []);
  t.deepEqual(scheduled.actions.trigger, {
    method: 'POST',
    path: '/api/apps/reports/cron/trigger',
    body: { process: 'nightly' },
  });
  t.is(scheduled.actions.schedule.method, 'PUT');

  const zoned = describeCronProcess(
    cronFacts({
      parents: [
        {
          jobId: 'j',
          region: 'local',
          status: 'running',
          paused: false,
          cron: '0 3 * * *',
          timeZone: 'Europe/Berlin',
          children: [],
        },
      ],
    }),
    NOW,
  );
  t.is(zoned.nextRun?.local, '2025-03-02 03:00 GMT+1');
  t.is(zoned.nextRun?.at, '2025-03-02T02:00:00.000Z');

  const table: [string, Partial<CronProcessFacts>, CronStatus, string[]][] = [
    [
      'paused',
      { parents: [{ jobId: 'j', region: 'local', status: 'running', paused: true, cron: '0 3 * * *', children: [] }] },
      'paused',
      ['cron.paused'],
    ],
    ['no job although deployed', { parents: [] }, 'not_running', ['cron.not_running']],
    ['deploy false', { deploy: false, parents: [] }, 'not_deployed', []],
    ['never released', { released: false, parents: [] }, 'not_deployed', ['cron.never_deployed']],
    ['unresolved cron incident', { activeIncidents: 2 }, 'scheduled', ['cron.active_incident']],
    [
      'unreadable schedule',
      {
        parents: [{ jobId: 'j', region: 'local', status: 'running', paused: false, cron: '0 0 31 2 *', children: [] }],
      },
      'scheduled',
      ['cron.unreadable_schedule'],
    ],
    [
      'last run failed',
      {
        parents: [
          {
            jobId: 'j',
            region: 'local',
            status: 'running',
            paused: false,
            cron: '0 3 * * *',
            children: [
              { status: 'complete', createdAt: '2025-02-28T03:00:00Z' },
              { status: 'failed', createdAt: '2025-03-01T03:00:00Z', exitCode: 2 },
            ],
          },
        ],
      },
      'scheduled',
      ['cron.last_run_failed'],
    ],
  ];
  for (const [name, over, status, codes] of table) {
    const view = describeCronProcess(cronFacts(over), NOW);
    t.is(view.status, status, name);
    t.deepEqual(
      view.risks.map((r) => r.code),
      codes,
      name,
    );
    if (status !== 'scheduled') t.is(view.nextRun, null, name);
  }
  const failed = describeCronProcess(cronFacts(table[6]![1]), NOW);
  t.like(failed.lastRun, { status: 'failed', exitCode: 2, local: '2025-03-01 03:00 UTC', relative: '7h ago' });
  t.like(failed.children, { total: 2, complete: 1, failed: 1, running: 0 });

  const overridden = describeCronProcess(
    cronFacts({
      override: { schedule: '*/5 * * * *', updatedBy: 'ops', updatedAt: '2025-03-01T09:00:00Z' },
      parents: [],
      deploy: false,
    }),
    NOW,
  );
  t.is(overridden.schedule, '*/5 * * * *', 'without a running job the override is the schedule in force');
  t.is(overridden.specSchedule, '0 3 * * *');
});

const deployFacts = (over: Partial<DeployConfidenceFacts> = {}): DeployConfidenceFacts => ({
  app: 'web',
  deploy: true,
  autoRollback: true,
  releaseCommit: 'a'.repeat(40),
  deployments: [],
  source: {
    kind: 'apps-repository',
    folder: 'web',
    dirtyPaths: [],
    dirtyCount: 0,
    head: 'b'.repeat(40),
    undeployedCommits: 0,
  },
  canaries: [],
  awaitingPromotion: [],
  ...over,
});
const deployment = (
  status: string,
  kind: 'deploy' | 'preflight' | 'rollback' = 'deploy',
  createdAt = '2025-03-01T09:00:00Z',
) => ({
  id: `dep_${status}_${createdAt}`,
  sagaId: 'saga',
  operationId: 'op',
  kind,
  status,
  ref: 'HEAD',
  commit: 'c'.repeat(40),
  failedStep: status === 'failed' ? 'inspect' : null,
  message: status === 'failed' ? 'clone of https://user:hunter2token@git.example/x failed' : null,
  trigger: 'api',
  createdAt,
  finishedAt: createdAt,
});

test('assessDeployConfidence lowers confidence for each named reason', (t) => {
  const table: [string, Partial<DeployConfidenceFacts>, Confidence, string[]][] = [
    ['never deployed', {}, 'unknown', ['deploy.never_deployed']],
    ['last deploy succeeded', { deployments: [deployment('succeeded')] }, 'high', []],
    ['last deploy failed', { deployments: [deployment('failed')] }, 'low', ['deploy.last_failed']],
    ['last deploy rolled back', { deployments: [deployment('rolled_back')] }, 'low', ['deploy.last_rolled_back']],
    ['in progress', { deployments: [deployment('running')] }, 'medium', ['deploy.in_progress']],
    [
      'two of three failed',
      {
        deployments: [
          deployment('succeeded', 'deploy', '2025-03-01T09:00:00Z'),
          deployment('failed', 'deploy', '2025-03-01T08:00:00Z'),
          deployment('failed', 'deploy', '2025-03-01T07:00:00Z'),
        ],
      },
      'low',
      ['deploy.unstable'],
    ],
    [
      'preflight failed after the deploy',
      { deployments: [deployment('failed', 'preflight', '2025-03-01T09:30:00Z'), deployment('succeeded')] },
      'medium',
      ['deploy.preflight_failed'],
    ],
    [
      'dirty source',
      {
        deployments: [deployment('succeeded')],
        source: {
          kind: 'apps-repository',
          folder: 'web',
          dirtyPaths: ['web/server.mjs'],
          dirtyCount: 1,
          head: null,
          undeployedCommits: 2,
        },
      },
      'medium',
      ['source.dirty', 'source.undeployed_commits'],
    ],
    [
      'no auto rollback',
      { deployments: [deployment('succeeded')], autoRollback: false },
      'medium',
      ['policy.no_auto_rollback'],
    ],
    [
      'canaries waiting',
      { deployments: [deployment('succeeded')], awaitingPromotion: ['web'] },
      'medium',
      ['canary.awaiting_promotion'],
    ],
    [
      'unknown source',
      { deployments: [deployment('succeeded')], source: { kind: 'unavailable', reason: 'not a git checkout' } },
      'high',
      ['source.unavailable'],
    ],
  ];
  for (const [name, over, confidence, codes] of table) {
    const view = assessDeployConfidence(deployFacts(over));
    t.is(view.confidence, confidence, name);
    t.deepEqual(
      view.reasons.map((r) => r.code),
      codes,
      name,
    );
  }
  const failed = assessDeployConfidence(deployFacts({ deployments: [deployment('failed')] }));
  t.is(failed.lastStatus, 'failed');
  t.false(JSON.stringify(failed).includes('hunter2token'), 'credentials in URLs are masked');
  t.is(
    assessDeployConfidence(
      deployFacts({
        source: {
          kind: 'apps-repository',
          folder: 'web',
          dirtyPaths: ['web/x'],
          dirtyCount: 1,
          head: null,
          undeployedCommits: null,
        },
      }),
    ).source.dirty,
    true,
  );
});

const schemas = {
  incidentAction: {
    type: 'object',
    required: ['action'],
    properties: { action: { enum: ['acknowledge', 'snooze', 'open', 'resolve'] }, correlationKey: { type: 'string' } },
  },
  cronAction: { type: 'object', properties: { process: { type: 'string' } } },
  deploy: { type: 'object', properties: { ref: { type: 'string' } } },
  rollback: { type: 'object', properties: { regions: { type: 'array' } } },
  snapshotRestore: { type: 'object', required: ['confirm'], properties: { confirm: { const: true } } },
  snapshotTake: { type: 'object', maxProperties: 0 },
  canaryPromote: { type: 'object', properties: {} },
  endpointToggle: { type: 'object', required: ['hostname', 'enabled'] },
};

test('actionCatalog grades risk as the spec says and asks for confirmation of every high-risk action', (t) => {
  const actions = actionCatalog(schemas);
  const risk = Object.fromEntries(actions.map((a) => [a.id, a.risk]));
  t.deepEqual(risk, {
    'incident.acknowledge': 'low',
    'incident.snooze': 'low',
    'incident.resolve': 'low',
    'cron.trigger': 'medium',
    'cron.pause': 'medium',
    'cron.resume': 'medium',
    'app.preflight': 'low',
    'app.deploy': 'high',
    'app.rollback': 'high',
    'snapshot.restore': 'high',
    'snapshot.take': 'low',
    'canary.promote': 'high',
    'endpoint.toggle': 'high',
  });
  for (const action of actions) t.is(action.confirmation.required, action.risk === 'high', action.id);
  const ack = actions.find((a) => a.id === 'incident.acknowledge')!;
  t.deepEqual((ack.schema as { properties: Record<string, unknown> }).properties.action, { const: 'acknowledge' });
  t.deepEqual(
    schemas.incidentAction.properties.action,
    { enum: ['acknowledge', 'snooze', 'open', 'resolve'] },
    'the route schema is not changed',
  );
  t.is(actions.find((a) => a.id === 'app.deploy')!.schema, schemas.deploy, 'the route schema itself, not a copy');
  t.true(
    actions.find((a) => a.id === 'snapshot.restore')!.headers.some((h) => h.name === 'Idempotency-Key' && h.required),
  );
  t.deepEqual(
    filterActions(actions, { risk: 'medium' }).map((a) => a.id),
    ['cron.trigger', 'cron.pause', 'cron.resume'],
  );
  t.is(filterActions(actions, { mobileReady: false }).length, 0);
});

test('authHints describes mechanisms and public routes from booleans only', (t) => {
  const routes = [
    { route: 'GET /api/health', public: true },
    { route: 'POST /api/webhooks/github', public: true },
    { route: 'GET /api/apps', public: false },
    { route: 'GET /metrics', public: false },
    { route: 'POST /api/access/tokens', public: false },
  ];
  const open = authHints({
    profile: 'development',
    apiTokenConfigured: false,
    requireExplicitAuth: false,
    webhookSecretConfigured: false,
    logpushTokenConfigured: false,
    scopedTokensServed: false,
    edgeIdentityConfigured: undefined,
    routes,
    explicitOnlyRoutes: ['GET /metrics'],
  });
  t.is(open.mode, 'open');
  t.deepEqual(open.routes.public, ['GET /api/health', 'POST /api/webhooks/github']);
  t.is(open.routes.protectedCount, 2);
  t.deepEqual(
    open.mechanisms.map((m) => m.id),
    ['control-token', 'webhook-signature', 'logpush-secret', 'event-stream'],
  );
  t.true(open.hints.some((h) => h.includes('open to anyone')));
  const locked = authHints({
    profile: 'production',
    apiTokenConfigured: true,
    requireExplicitAuth: true,
    webhookSecretConfigured: true,
    logpushTokenConfigured: true,
    scopedTokensServed: true,
    edgeIdentityConfigured: false,
    routes,
    explicitOnlyRoutes: ['GET /metrics'],
  });
  t.is(locked.mode, 'protected');
  t.deepEqual(
    locked.mechanisms.map((m) => [m.id, m.configured]),
    [
      ['control-token', true],
      ['scoped-token', true],
      ['edge-access-identity', false],
      ['webhook-signature', true],
      ['logpush-secret', true],
      ['event-stream', true],
    ],
  );
  t.false(locked.hints.some((h) => h.includes('open to anyone')));
});

test('planSecretMigration names each key, its location and next action, never a value', (t) => {
  const plan = planSecretMigration(
    [
      { variable: 'SVC_API_TOKEN', set: true, description: 'Static control token' },
      { variable: 'SVC_WEBHOOK_SECRET', set: false, description: 'Webhook secret' },
    ],
    [
      {
        app: 'shop',
        secretsDir: '/data/secrets/shop',
        declared: ['DB_PASSWORD', 'MISSING_KEY', 'OPEN_KEY'],
        valueFiles: [
          { name: 'DB_PASSWORD', mode: 0o600, regular: true },
          { name: 'OPEN_KEY', mode: 0o644, regular: true },
          { name: 'STRAY', mode: 0o600, regular: true },
        ],
        envKeys: [
          { path: 'env', key: 'STRIPE_API_KEY', hasValue: true },
          { path: 'env', key: 'LOG_LEVEL', hasValue: true },
          { path: 'processes.web.env', key: 'EMPTY_TOKEN', hasValue: false },
        ],
        schedulerVariables: [{ process: 'web', key: 'SIGNING_KEY', destination: 'signing-key' }],
      },
    ],
  );
  t.deepEqual(
    plan.entries.map((e) => [e.key, e.location, e.action]),
    [
      ['SVC_API_TOKEN', 'platform-environment', 'none'],
      ['SVC_WEBHOOK_SECRET', 'platform-environment', 'none'],
      ['DB_PASSWORD', 'app-secret-file', 'none'],
      ['MISSING_KEY', 'app-secret-file', 'provide-value'],
      ['OPEN_KEY', 'app-secret-file', 'restrict-permissions'],
      ['STRAY', 'app-secret-file', 'declare'],
      ['SIGNING_KEY', 'scheduler-variable-file', 'verify-provisioned'],
      ['STRIPE_API_KEY', 'spec-env', 'move-to-secrets'],
    ],
  );
  t.like(
    plan.entries.find((e) => e.key === 'OPEN_KEY'),
    { present: true, protection: 'exposed', encrypted: false },
  );
  t.like(
    plan.entries.find((e) => e.key === 'STRIPE_API_KEY'),
    { committed: true, declared: false, where: 'env.STRIPE_API_KEY' },
  );
  t.like(plan.summary, {
    keys: 8,
    none: 3,
    'provide-value': 1,
    'restrict-permissions': 1,
    'move-to-secrets': 1,
    declare: 1,
    'verify-provisioned': 1,
  });
  for (const entry of plan.entries) t.false('value' in entry);
});

const readyFacts = (over: Partial<ReadinessFacts> = {}): ReadinessFacts => ({
  profile: 'production',
  apiTokenConfigured: true,
  requireExplicitAuth: true,
  tunnel: {
    configFile: '/d/edge/tunnel.yml',
    configWritten: true,
    credentialsFile: '/d/edge/svc.json',
    credentialsPresent: true,
    lastError: null,
  },
  webhookSecretConfigured: true,
  autoDeployApps: [],
  databases: [{ app: 'shop', database: 'shop', snapshots: 2, keep: 3, exportBucket: 'backups', preRestore: true }],
  objectStorageConfigured: true,
  postgresPasswordFileConfigured: true,
  eventSinkConfigured: true,
  notificationChannels: 0,
  unpinnedApps: [],
  operationWorkerEnabled: true,
  secretSummary: {
    keys: 1,
    none: 1,
    'provide-value': 0,
    'restrict-permissions': 0,
    'move-to-secrets': 0,
    declare: 0,
    'verify-provisioned': 0,
  },
  ...over,
});

test('evaluateReadiness passes a complete production setup and names each failing check', (t) => {
  const all = evaluateReadiness(readyFacts());
  t.true(all.ready);
  t.true(
    all.checks.every((c) => c.status === 'pass'),
    JSON.stringify(all.checks.filter((c) => c.status === 'fail')),
  );
  const table: [string, Partial<ReadinessFacts>, string, boolean][] = [
    ['development profile', { profile: 'development' }, 'profile', false],
    ['no token', { apiTokenConfigured: false }, 'auth.token', false],
    ['no explicit auth', { requireExplicitAuth: false }, 'auth.explicit', false],
    ['tunnel not written', { tunnel: { ...readyFacts().tunnel, configWritten: false } }, 'tunnel.config', false],
    ['no credentials', { tunnel: { ...readyFacts().tunnel, credentialsPresent: false } }, 'tunnel.config', false],
    [
      'autodeploy without secret',
      { webhookSecretConfigured: false, autoDeployApps: ['web'] },
      'webhooks.secret',
      false,
    ],
    ['no webhook secret, no autodeploy', { webhookSecretConfigured: false }, 'webhooks.secret', true],
    ['no snapshot', { databases: [{ ...readyFacts().databases[0]!, snapshots: 0 }] }, 'backups.snapshots', false],
    ['keep zero', { databases: [{ ...readyFacts().databases[0]!, keep: 0 }] }, 'backups.policy', false],
    ['no export', { databases: [{ ...readyFacts().databases[0]!, exportBucket: null }] }, 'backups.offsite', true],
    [
      'missing secret',
      { secretSummary: { ...readyFacts().secretSummary, 'provide-value': 1 } },
      'secrets.values',
      false,
    ],
    ['unpinned image', { unpinnedApps: ['web'] }, 'images.pinned', false],
    ['no delivery', { eventSinkConfigured: false }, 'events.delivery', true],
    ['worker off', { operationWorkerEnabled: false }, 'operations.worker', false],
  ];
  for (const [name, over, id, stillReady] of table) {
    const result = evaluateReadiness(readyFacts(over));
    t.is(result.checks.find((c) => c.id === id)?.status, 'fail', name);
    t.is(result.ready, stillReady, name);
    t.truthy(result.checks.find((c) => c.id === id)?.reason, name);
  }
});

const op = (id: string, kind: string, app: string | null, status: string): Operation => ({
  id,
  kind: kind as Operation['kind'],
  status: status as Operation['status'],
  app,
  ref: null,
  sagaId: null,
  payload: {},
  result: null,
  attempts: 1,
  maxAttempts: 3,
  lockOwner: null,
  lockExpiresAt: null,
  nextAttemptAt: '2025-03-01T00:00:00Z',
  lastError: status === 'failed' ? 'boom' : null,
  stage: null,
  mutated: false,
  dependsOn: null,
  createdAt: `2025-03-01T00:00:0${id.slice(-1)}Z`,
  updatedAt: '2025-03-01T00:00:00Z',
  startedAt: null,
  finishedAt: null,
});

test('standingFailures keeps failures that no later success of the same kind and app replaced, newest first', (t) => {
  const ops = [
    op('op1', 'app.deploy', 'web', 'failed'),
    op('op2', 'app.deploy', 'web', 'succeeded'),
    op('op3', 'app.deploy', 'api', 'failed'),
    op('op4', 'app.preflight', 'web', 'failed'),
    op('op5', 'app.deploy', 'api', 'failed'),
  ];
  t.deepEqual(
    standingFailures(ops).map((o) => o.id),
    ['op5', 'op4', 'op3'],
  );
});

test('buildInbox sorts, counts and limits every list', (t) => {
  const incident = (key: string, severity: string, lastSeen: string) => ({
    source: 'svc',
    app: 'web',
    environment: 'dev',
    correlationKey: key,
    severity,
    eventCount: 1,
    firstSeen: lastSeen,
    lastSeen,
    representative: { id: `evt_${key}`, type: 'x', title: 'x', state: 'open', occurredAt: lastSeen },
  });
  const inbox = buildInbox(
    {
      incidents: [
        incident('a', 'warning', '2025-03-01T09:00:00Z'),
        incident('b', 'critical', '2025-03-01T08:00:00Z'),
        incident('c', 'warning', '2025-03-01T09:30:00Z'),
      ],
      operations: [op('op1', 'app.deploy', 'web', 'failed'), op('op2', 'app.deploy', 'web', 'running')],
      deployRisks: [{ app: 'web', code: 'deploy.last_failed', severity: 'critical', message: 'm' }],
      cronRisks: [{ app: 'r', process: 'n', code: 'cron.paused', severity: 'warning', message: 'm' }],
      snapshots: [{ app: 'shop', database: 'shop', snapshots: 5, keep: 3, overLimit: 2, latestRestorePoint: null }],
      secrets: {
        keys: 2,
        none: 1,
        'provide-value': 1,
        'restrict-permissions': 0,
        'move-to-secrets': 0,
        declare: 0,
        'verify-provisioned': 0,
      },
      wakeTargets: [{ readiness: 'ready' }, { readiness: 'ready' }, { readiness: 'scaled_to_zero' }],
    },
    2,
  );
  t.deepEqual(
    inbox.incidents.items.map((i) => i.correlationKey),
    ['b', 'c'],
  );
  t.like(inbox.incidents, { total: 3, truncated: true });
  t.deepEqual(inbox.incidents.items[0]!.action.body, {
    correlationKey: 'b',
    source: 'svc',
    app: 'web',
    environment: 'dev',
  });
  t.deepEqual(
    inbox.operations.active.items.map((o) => o.id),
    ['op2'],
  );
  t.deepEqual(
    inbox.operations.failed.items.map((o) => o.id),
    ['op1'],
  );
  t.is(inbox.operations.failed.items[0]!.links.operation, '/api/v1/operations/op1');
  t.like(inbox.summary, {
    incidents: 3,
    criticalIncidents: 1,
    activeOperations: 1,
    failedOperations: 1,
    deployRisks: 1,
    cronRisks: 1,
    snapshotRisks: 1,
    secretIssues: 1,
  });
  t.deepEqual(inbox.wakeTargets, { total: 3, byReadiness: { ready: 2, scaled_to_zero: 1 } });
  t.like(inbox.snapshots, { databases: 1, overLimit: 2 });
});

test('secret safety masks URL credentials and scrubs known secret values anywhere in a document', (t) => {
  t.is(
    redactCredentials('git clone https://bob:s3cretpass@example.com/r.git failed'),
    'git clone https://[redacted]@example.com/r.git failed',
  );
  const doc = { a: 'token=SUPERSECRET1 here', list: ['SUPERSECRET1'], nested: { SUPERSECRET1: 1 }, n: 3, short: 'abc' };
  const scrubbed = scrubSecretValues(doc, ['SUPERSECRET1', 'abc']);
  t.deepEqual(scrubbed, {
    a: 'token=[redacted] here',
    list: ['[redacted]'],
    nested: { '[redacted]': 1 },
    n: 3,
    short: 'abc',
  });
  t.false(containsSecretValue(scrubbed, ['SUPERSECRET1']));
  t.true(containsSecretValue(doc, ['SUPERSECRET1']));
});

test('rollupSnapshots totals per-app counts, keep and over-limit', (t) => {
  const rollup = rollupSnapshots([
    {
      app: 'b',
      database: 'b',
      snapshots: 5,
      keep: 3,
      overLimit: 2,
      latestRestorePoint: { filename: 'f', createdAt: '2025-03-01T00:00:00.000Z', sizeBytes: 1 },
    },
    { app: 'a', database: 'a', snapshots: 0, keep: 2, overLimit: 0, latestRestorePoint: null },
  ]);
  t.deepEqual(
    rollup.apps.map((a) => a.app),
    ['a', 'b'],
  );
  t.deepEqual(rollup.totals, {
    databases: 2,
    snapshots: 5,
    keep: 5,
    overLimit: 2,
    appsOverLimit: 1,
    appsWithoutSnapshot: 1,
  });
});

test('platformReleaseHistory marks the running build and names its immutable identity', (t) => {
  const start = {
    version: '0.2.0',
    label: 'v0.2.0-platform-0-gbbbbbbb',
    commit: 'b'.repeat(40),
    node: 'v20',
    profile: 'development',
    startedAt: '2025-03-01T00:00:00Z',
  };
  const history = platformReleaseHistory({
    current: start,
    groups: [
      {
        version: '0.2.0',
        label: start.label,
        commit: start.commit,
        firstSeenAt: start.startedAt,
        lastSeenAt: start.startedAt,
        starts: 2,
      },
      {
        version: '0.1.0',
        label: 'v0.1.0-platform',
        commit: null,
        firstSeenAt: '2025-02-01T00:00:00Z',
        lastSeenAt: '2025-02-02T00:00:00Z',
        starts: 3,
      },
    ],
    recentStarts: [start],
    operations: [op('op1', 'platform.upgrade', null, 'failed')],
  });
  t.deepEqual(
    history.releases.map((r) => [r.version, r.current, r.identity]),
    [
      ['0.2.0', true, `platform-${'b'.repeat(40)}`],
      ['0.1.0', false, null],
    ],
  );
  t.like(history.operations[0], { kind: 'platform.upgrade', status: 'failed', lastError: 'boom' });
});
