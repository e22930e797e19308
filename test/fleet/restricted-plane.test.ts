// tier: full
import fs from 'node:fs';
import test from 'ava';
import { loadConfig } from '../../platform/config.js';
import { openControlStore } from '../../store/open-stores.js';
import { loadRestrictedMode } from '../../platform/fleet/restricted-config.js';
import { silentLogger } from '../../platform/logger.js';
import { startRestrictedPlane, restrictedCapabilities } from '../../wiring/restricted-plane.js';
import { request } from '../helpers/http-request.js';
import { rawUpgrade } from '../helpers/raw-upgrade.js';
import { startRestrictedFixture, type RestrictedFixture } from '../helpers/fleet/restricted-fixture.js';
import { makeTestCertificates } from '../helpers/fleet/test-certificates.js';
import { exchangeIdentity, startTestRestrictedPlane } from '../helpers/fleet/restricted-plane.js';

let fixture: RestrictedFixture;
test.before(async () => {
  fixture = await startRestrictedFixture();
});
test.after.always(async () => {
  await fixture?.stop();
});

const env = () => ({ ...fixture.env, SVC_DATA_DIR: fixture.dataDir() });
const ADMIN = () => ({ authorization: `Bearer ${fixture.adminToken}` });

test.serial(
  'the restricted plane starts no scheduler, registry, discovery, worker, snapshot, webhook, watcher or tunnel: only its listener is new',
  async (t) => {
    const config = loadConfig(env());
    const restricted = loadRestrictedMode(env(), config)!;
    // A closed handle leaves the list only after the loop turns: let it settle before each look.
    const settled = async () => {
      for (let i = 0; i < 3; i += 1) await new Promise((resolve) => setImmediate(resolve));
      return process.getActiveResourcesInfo().sort();
    };
    const before = await settled();
    const plane = await startRestrictedPlane(config, restricted, silentLogger());
    let closed = false;
    t.teardown(async () => {
      if (!closed) await plane.close();
    });
    const running = await settled();
    t.deepEqual(
      running,
      [...before, 'TCPServerWrap'].sort(),
      'one listening socket and nothing else: no timer, watcher, child process or file handle',
    );
    await plane.close();
    closed = true;
    t.deepEqual(await settled(), before, 'closing it leaves nothing behind');
    // Nothing of the full plane touched the disk or the tables: no tunnel config, releases, PostgreSQL folder, apps.
    t.deepEqual(
      fs.readdirSync(config.dataDir).filter((name) => !name.startsWith('control.db')),
      [],
    );
    const store = openControlStore(config.dataDir);
    t.teardown(() => store.db.close());
    t.is((store.db.prepare('SELECT COUNT(*) AS n FROM apps').get() as { n: number }).n, 0);
    t.is((store.db.prepare('SELECT COUNT(*) AS n FROM operations').get() as { n: number }).n, 0);
  },
);

test('capabilities advertise exactly the restricted route set, and every other route of the full plane is absent', async (t) => {
  const { url } = await startTestRestrictedPlane(t, env());
  const capabilities = await request(`${url}/api/v1/capabilities`, { headers: ADMIN() });
  t.is(capabilities.status, 200);
  t.like(capabilities.body, { mode: 'restricted', environment: 'staging', profile: 'development' });
  t.deepEqual(capabilities.body.capabilities, JSON.parse(JSON.stringify(restrictedCapabilities(true))));
  t.deepEqual(
    capabilities.body.capabilities.map((c: { name: string }) => c.name),
    ['meta', 'spec-validation', 'fleet-authority', 'external-admission'],
  );
  t.is((await request(`${url}/api/health`)).status, 200);
  t.is((await request(`${url}/api/v1/capabilities`)).status, 401, 'explicit authentication');
  for (const path of [
    '/api/apps',
    '/api/events',
    '/metrics',
    '/api/operations/active',
    '/api/tunnel/ingress',
    '/api/validate',
    '/api/access/tokens',
    '/api/v1/apps/sample/snapshots',
  ]) {
    const answer = await request(`${url}${path}`, { headers: ADMIN() });
    t.is(answer.status, 404, path);
    t.is(answer.body.error.code, 'route_not_found');
  }
  t.is((await request(`${url}/api/webhooks/github`, { method: 'POST', json: {} })).status, 404);
  const upgrade = await rawUpgrade(url, '/api/v1/events', { headers: ADMIN() });
  t.regex(await upgrade.ended, /^HTTP\/1\.1 404 /);
  const validate = await request(`${url}/api/v1/validate/infraspec`, {
    method: 'POST',
    headers: ADMIN(),
    json: {
      spec: { name: 'x', processes: { web: { port: 1 } }, placement: { nodePool: 'gpu' } },
      fleetDocument: { apiVersion: 'v1', kind: 'Fleet', metadata: { name: 'f' }, nodePools: [{ name: 'general' }] },
    },
  });
  t.false(validate.body.valid);
});

test('fleet validation, inventory, capacity plans proposed as pull requests, dispatch of the bound workflow, attempts live only while unexpired, and reconciliations', async (t) => {
  const { url, plane } = await startTestRestrictedPlane(t, env());
  const inventory = await request(`${url}/api/v1/fleet/inventory`, { headers: ADMIN() });
  t.like(inventory.body, { fleet: 'staging-fleet', environment: 'staging', plans: 0 });
  t.deepEqual(
    inventory.body.nodePools.map((p: { name: string }) => p.name),
    ['general', 'batch'],
  );
  const validated = await request(`${url}/api/v1/fleet/validate`, {
    method: 'POST',
    headers: ADMIN(),
    json: {
      fleetDocument: {
        apiVersion: 'v1',
        kind: 'Fleet',
        metadata: { name: 'f' },
        nodePools: [{ name: 'a' }, { name: 'a' }],
      },
    },
  });
  t.false(validated.body.valid);
  t.true(validated.body.findings.some((f: { rule: string }) => f.rule.includes('duplicate')));

  const unknownPool = await request(`${url}/api/v1/fleet/plans`, {
    method: 'POST',
    headers: ADMIN(),
    json: { namespace: 'team-a', nodePool: 'gpu', processes: [{ name: 'web', count: 2, cpu: 100, memory: 128 }] },
  });
  t.is(unknownPool.status, 400);
  const created = await request(`${url}/api/v1/fleet/plans`, {
    method: 'POST',
    headers: ADMIN(),
    json: { namespace: 'team-a', nodePool: 'general', processes: [{ name: 'web', count: 2, cpu: 100, memory: 128 }] },
  });
  t.is(created.status, 201, created.text);
  const plan = created.body.plan;
  t.regex(plan.planSha256, /^[0-9a-f]{64}$/);
  t.deepEqual(plan.plan.totals, { count: 2, cpu: 200, memory: 256 });

  // The plan is proposed as a pull request in the fleet repository, once.
  const proposed = await request(`${url}/api/v1/fleet/plans/${plan.id}/pull-request`, {
    method: 'POST',
    headers: ADMIN(),
  });
  t.is(proposed.status, 201, proposed.text);
  t.like(proposed.body.plan.pullRequest, { branch: `svc/${plan.id}`, path: `plans/team-a/${plan.id}.json` });
  const pull = fixture.gitHost.pulls.find((p) => p.head === `svc/${plan.id}`)!;
  t.is(proposed.body.plan.pullRequest.number, pull.number);
  t.is(pull.base, 'main');
  t.true(pull.body.includes(plan.planSha256));
  t.deepEqual(JSON.parse(fixture.gitHost.files.get(`svc/${plan.id}:plans/team-a/${plan.id}.json`)!), {
    id: plan.id,
    planSha256: plan.planSha256,
    ...plan.plan,
  });
  t.is(
    (await request(`${url}/api/v1/fleet/plans/${plan.id}/pull-request`, { method: 'POST', headers: ADMIN() })).body
      .error.code,
    'pull_request_exists',
  );

  // A dispatch the git host refuses ends its attempt at once; the next one starts the bound workflow.
  fixture.gitHost.failNextDispatch(422);
  const refused = await request(`${url}/api/v1/fleet/plans/${plan.id}/dispatch`, {
    method: 'POST',
    headers: ADMIN(),
    json: { runner: 'runner-0' },
  });
  t.is(refused.status, 503);
  t.is(refused.body.error.code, 'git_host_unavailable');
  const dispatched = await request(`${url}/api/v1/fleet/plans/${plan.id}/dispatch`, {
    method: 'POST',
    headers: ADMIN(),
    json: { runner: 'runner-1', leaseSeconds: 600 },
  });
  t.is(dispatched.status, 201, dispatched.text);
  t.true(dispatched.body.attempt.live);
  t.deepEqual(
    fixture.gitHost.dispatches.find((d) => d.inputs.planId === plan.id),
    {
      workflow: 'admit.yml',
      ref: 'refs/heads/main',
      inputs: {
        planId: plan.id,
        planSha256: plan.planSha256,
        attemptId: dispatched.body.attempt.id,
        runner: 'runner-1',
      },
    },
  );
  const busy = await request(`${url}/api/v1/fleet/plans/${plan.id}/dispatch`, {
    method: 'POST',
    headers: ADMIN(),
    json: { runner: 'runner-2' },
  });
  t.is(busy.status, 409);
  t.is(busy.body.error.code, 'attempt_in_progress');
  t.like((await request(`${url}/api/v1/fleet/plans/${plan.id}/attempts`, { headers: ADMIN() })).body, {
    planId: plan.id,
    live: true,
  });

  // The lease runs out (time moved on in the database): the attempt no longer proves liveness.
  plane.db
    .prepare('UPDATE fleet_attempts SET expires_at = ? WHERE id = ?')
    .run(new Date(Date.now() - 1000).toISOString(), dispatched.body.attempt.id);
  const attempts = await request(`${url}/api/v1/fleet/plans/${plan.id}/attempts`, { headers: ADMIN() });
  t.false(attempts.body.live);
  t.like(
    attempts.body.attempts.find((a: { id: string }) => a.id === dispatched.body.attempt.id),
    { live: false, finishedAt: null },
  );
  t.like(
    attempts.body.attempts.find((a: { runner: string }) => a.runner === 'runner-0'),
    { live: false, outcome: 'dispatch_failed' },
  );
  const dry = await request(`${url}/api/v1/fleet/reconciliations`, { method: 'POST', headers: ADMIN(), json: {} });
  t.deepEqual(dry.body, {
    dryRun: true,
    attempts: [{ id: dispatched.body.attempt.id, planId: plan.id, action: 'mark_expired' }],
  });
  const applied = await request(`${url}/api/v1/fleet/reconciliations`, {
    method: 'POST',
    headers: ADMIN(),
    json: { dryRun: false },
  });
  t.false(applied.body.dryRun);
  const reconciled = (await request(`${url}/api/v1/fleet/plans/${plan.id}/attempts`, { headers: ADMIN() })).body
    .attempts;
  t.like(
    reconciled.find((a: { id: string }) => a.id === dispatched.body.attempt.id),
    { outcome: 'expired' },
  );
  t.is(
    (
      await request(`${url}/api/v1/fleet/plans/${plan.id}/dispatch`, {
        method: 'POST',
        headers: ADMIN(),
        json: { runner: 'runner-2' },
      })
    ).status,
    201,
  );
  t.is((await request(`${url}/api/v1/fleet/plans/plan_missing/attempts`, { headers: ADMIN() })).status, 404);
});

test('audit reads are for administrators only, and the chain of signed entries verifies without holding a secret', async (t) => {
  const { url } = await startTestRestrictedPlane(t, env());
  const token = await exchangeIdentity(url, await fixture.identity('8001'));
  await request(`${url}/api/v1/fleet/plans`, {
    method: 'POST',
    headers: ADMIN(),
    json: { namespace: 'team-b', nodePool: 'batch', processes: [{ name: 'job', count: 1, cpu: 50, memory: 64 }] },
  });
  t.is((await request(`${url}/api/v1/audit`)).status, 401);
  t.is((await request(`${url}/api/v1/audit`, { headers: { authorization: `Bearer ${token}` } })).status, 403);
  const audit = await request(`${url}/api/v1/audit`, { headers: ADMIN() });
  t.is(audit.status, 200);
  t.true(audit.body.verified);
  t.deepEqual(
    audit.body.entries.map((e: { action: string }) => e.action),
    ['fleet.plan.created', 'workload_token.exchanged'],
  );
  t.is(audit.body.entries[0].prevSha256, audit.body.entries[1].entrySha256);
  t.false(audit.text.includes(token));
  t.false(audit.text.includes(fixture.adminToken));
});

test('device enrollment waits for an administrator to approve or reject it', async (t) => {
  const { url } = await startTestRestrictedPlane(t, env());
  const certs = makeTestCertificates();
  t.teardown(() => certs.remove());
  const publicKey = (await import('node:crypto'))
    .createPublicKey(certs.keyPem)
    .export({ type: 'spki', format: 'pem' })
    .toString();
  const requested = await request(`${url}/api/v1/fleet/devices/enroll`, {
    method: 'POST',
    json: { name: 'laptop of ada', publicKey },
  });
  t.is(requested.status, 201, requested.text);
  const id = requested.body.enrollment.id as string;
  t.like(requested.body.enrollment, { state: 'pending', decidedBy: null });
  t.is(
    (await request(`${url}/api/v1/fleet/devices/enroll`, { method: 'POST', json: { name: 'again', publicKey } }))
      .status,
    409,
  );
  t.like((await request(`${url}/api/v1/fleet/devices/enroll/${id}`)).body, { enrollment: { id, state: 'pending' } });
  t.is((await request(`${url}/api/v1/fleet/devices/enrollments`)).status, 401);
  t.is((await request(`${url}/api/v1/fleet/devices/enrollments/${id}/approve`, { method: 'POST' })).status, 401);
  const approved = await request(`${url}/api/v1/fleet/devices/enrollments/${id}/approve`, {
    method: 'POST',
    headers: ADMIN(),
  });
  t.like(approved.body, { enrollment: { state: 'approved', decidedBy: 'control-token' } });
  t.is(
    (await request(`${url}/api/v1/fleet/devices/enrollments/${id}/reject`, { method: 'POST', headers: ADMIN() })).body
      .error.code,
    'enrollment_already_decided',
  );
  t.like((await request(`${url}/api/v1/fleet/devices/enroll/${id}`)).body, { enrollment: { state: 'approved' } });
});

test('the start stops when the PostgreSQL server cannot be verified over TLS', async (t) => {
  const stranger = makeTestCertificates();
  t.teardown(() => stranger.remove());
  const broken = { ...env(), SVC_POSTGRES_SSL_ROOT_CERT: stranger.caFile };
  const config = loadConfig(broken);
  const error = await t.throwsAsync(startRestrictedPlane(config, loadRestrictedMode(broken, config)!, silentLogger()));
  t.regex(error.message, /restricted mode needs the external PostgreSQL server over verified TLS/);
  t.false(fs.existsSync(`${config.dataDir}/control.db`), 'nothing was opened');
});
