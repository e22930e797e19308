// tier: full
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { ReleaseBuilder } from '../../platform/release-builder/index.js';
import { silentLogger } from '../../platform/logger.js';
import { setAppRelease } from '../../store/control/apps.js';
import { request, startTestControlPlane } from '../helpers/servers.js';
import { testConfig } from '../helpers/test-config.js';
import { tempDir } from '../helpers/temp-dir.js';
import { waitForReconciled } from '../helpers/wait-for.js';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.test', ...args], { cwd, stdio: 'ignore' });

test('cron routes trigger, pause, resume and reschedule a periodic process and emit job events', async (t) => {
  const code = path.join(tempDir(t), 'code');
  fs.mkdirSync(code);
  fs.writeFileSync(path.join(code, 'report.mjs'), "console.log('report done');\n");
  fs.writeFileSync(path.join(code, 'Dockerfile'), 'FROM node:20-alpine\nWORKDIR /app\nCMD ["node", "report.mjs"]\n');
  git(code, 'init', '-q', '-b', 'main');
  git(code, 'add', '-A');
  git(code, 'commit', '-q', '-m', 'job');
  const config = testConfig(t);
  fs.mkdirSync(path.join(config.appsDir, 'reports'), { recursive: true });
  fs.writeFileSync(
    path.join(config.appsDir, 'reports', 'infraspec.yaml'),
    `name: reports\ndeploy: true\nrepo:\n  url: ${code}\nprocesses:\n  nightly:\n    schedule: "0 3 * * *"\n`,
  );
  fs.mkdirSync(path.join(config.appsDir, 'web'));
  fs.writeFileSync(
    path.join(config.appsDir, 'web', 'infraspec.yaml'),
    'name: web\nprocesses:\n  web:\n    port: 8080\n',
  );
  const plane = await startTestControlPlane(t, config);
  const controllers = [plane.reconcilers.specController, plane.reconcilers.appController];
  await waitForReconciled(controllers, async () => (await request(`${plane.url}/api/apps/reports`)).status === 200, {
    what: 'reports discovered',
  });
  const release = await new ReleaseBuilder({ dataDir: config.dataDir, logger: silentLogger() }).build({
    app: 'reports',
    repoUrl: code,
    ref: 'main',
  });
  setAppRelease(plane.db, 'reports', { commit: release.manifest.commit, dir: release.dir });
  plane.reconcilers.appController.enqueue('reports');
  const scheduler = await plane.reconcilers.targets.get();
  await waitForReconciled(controllers, async () => (await scheduler.getJob('reports-nightly'))?.status === 'running', {
    what: 'the periodic job',
  });

  const triggered = await request(`${plane.url}/api/apps/reports/cron/trigger`, {
    method: 'POST',
    json: { by: 'ops' },
  });
  t.is(triggered.status, 202);
  t.is(triggered.body.process, 'nightly');
  t.is(triggered.body.executions.length, 1);
  const paused = await request(`${plane.url}/api/apps/reports/cron/pause`, { method: 'POST', json: {} });
  t.true(paused.body.paused);
  t.true((await scheduler.getJob('reports-nightly'))!.paused);
  const resumed = await request(`${plane.url}/api/apps/reports/cron/resume`, { method: 'POST' });
  t.false(resumed.body.paused);
  t.false((await scheduler.getJob('reports-nightly'))!.paused);

  const rescheduled = await request(`${plane.url}/api/apps/reports/cron/schedule`, {
    method: 'PUT',
    json: { schedule: '*/5 * * * *', by: 'ops' },
  });
  t.is(rescheduled.status, 200);
  t.deepEqual([rescheduled.body.previousSchedule, rescheduled.body.schedule], ['0 3 * * *', '*/5 * * * *']);
  await waitForReconciled(
    controllers,
    async () => (await scheduler.getJob('reports-nightly'))?.spec.periodic?.cron === '*/5 * * * *',
    { what: 'the override applied' },
  );
  await request(`${plane.url}/api/apps/reports/cron/schedule`, { method: 'PUT', json: { schedule: null } });
  await waitForReconciled(
    controllers,
    async () => (await scheduler.getJob('reports-nightly'))?.spec.periodic?.cron === '0 3 * * *',
    { what: 'back to the spec schedule' },
  );

  for (const type of ['job.triggered', 'job.paused', 'job.resumed', 'job.schedule_updated']) {
    const listed = await request(`${plane.url}/api/events?type=${type}`);
    const events = Array.isArray(listed.body) ? listed.body : listed.body.events;
    t.true(events.length >= 1, type);
    t.is(events[0].metadata.correlationKey, 'reports:nightly:cron', type);
  }

  const bad = await request(`${plane.url}/api/apps/reports/cron/schedule`, {
    method: 'PUT',
    json: { schedule: 'every day' },
  });
  t.is(bad.status, 400);
  t.is(bad.body.error.code, 'invalid_schedule');
  t.is(
    (await request(`${plane.url}/api/apps/reports/cron/trigger`, { method: 'POST', json: { process: 'nope' } })).status,
    404,
  );
  t.is(
    (await request(`${plane.url}/api/apps/web/cron/trigger`, { method: 'POST', json: {} })).body.error.code,
    'no_scheduled_process',
  );
  t.is((await request(`${plane.url}/api/apps/reports/cron/pause`, { method: 'POST', json: { extra: 1 } })).status, 400);
});
