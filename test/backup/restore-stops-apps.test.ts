// tier: full
/**
 * `svc restore --yes` over a platform whose API is stopped but whose apps still run (app processes
 * outlive the API by design): the restore stops them through the platform's scheduler before the swap,
 * so none writes into the folder kept as the pre-restore backup or holds ports the restored platform's
 * apps need; the restored platform starts its own when it starts. A refused restore stops nothing.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { restorePlatform } from '../../controllers/backup/restore-platform.js';
import { waitForHealthyInstances } from '../../domain/registry/index.js';
import { milliseconds } from '../../domain/scheduler/index.js';
import { LocalRegistry } from '../../platform/local-registry/index.js';
import { isProcessAlive, LocalScheduler } from '../../platform/local-scheduler/index.js';
import { silentLogger } from '../../platform/logger.js';
import { stopAppsOf } from '../../wiring/control/platform-backups.js';
import { stopAppsIn } from '../helpers/stop-apps.js';
import { fastRestart, SERVER_JS, serviceGroup, serviceJob } from '../platform/local-scheduler/fixtures.js';
import { backupFixture, type BackupFixture } from './backup-fixture.js';

/** Starts `demo-web` on the fixture's data folder, then closes the driver as a stopping API does: the process keeps running. */
async function appLeftRunning(fx: BackupFixture): Promise<number> {
  const appDir = path.join(fx.root, 'demo-app');
  fs.mkdirSync(appDir, { recursive: true });
  fs.writeFileSync(path.join(appDir, 'server.mjs'), SERVER_JS);
  const registry = new LocalRegistry();
  const driver = await LocalScheduler.open({
    dataDir: fx.dataDir,
    registry,
    monitorInterval: milliseconds(40),
    defaultRestart: fastRestart,
  });
  await driver.submitJob(
    serviceJob('demo-web', serviceGroup({ command: `${process.execPath} server.mjs`, workdir: appDir })),
  );
  await waitForHealthyInstances(registry, 'demo-web', { timeoutMs: 20_000 });
  const [allocation] = await driver.listAllocations({ jobId: 'demo-web' });
  await driver.close();
  return allocation!.task.pid!;
}

test('A restore with --yes stops the replaced platform apps before the swap; a refused one stops nothing', async (t) => {
  const fx = await backupFixture(t);
  const backup = await fx.service.take({ noSecrets: true });
  t.is(backup.status, 'verified', backup.error ?? '');
  const pid = await appLeftRunning(fx);
  t.teardown(async () => {
    // Whatever the outcome, nothing of this test keeps running.
    await stopAppsIn(fx.dataDir).catch(() => undefined);
    for (const name of fs.readdirSync(fx.root))
      if (name.startsWith('data.pre-restore-')) await stopAppsIn(path.join(fx.root, name)).catch(() => undefined);
  });
  t.true(isProcessAlive(pid, undefined), 'the app outlives the stopped API');
  const restore = (yes: boolean) =>
    restorePlatform({
      archive: fx.service.archivePath(backup),
      key: undefined,
      dataDir: fx.dataDir,
      appsDir: fx.appsDir,
      yes,
      platformRunning: () => false,
      stopApps: (dataDir) => stopAppsOf(dataDir, silentLogger()),
    });

  await t.throwsAsync(restore(false), { message: /--yes/ });
  t.true(isProcessAlive(pid, undefined), 'a refused restore leaves the apps running');

  const report = await restore(true);
  t.deepEqual(report.stoppedApps, ['local/demo-web']);
  t.false(isProcessAlive(pid, undefined), 'the replaced platform app process is stopped');
  // The pre-restore folder records the job as stopped (dead), with no allocation left running.
  const state = JSON.parse(fs.readFileSync(path.join(report.preRestore!, 'scheduler', 'state.json'), 'utf8')) as {
    jobs: Record<string, { status: string }>;
    allocations: Record<string, { jobId: string; status: string }>;
  };
  t.is(state.jobs['demo-web']?.status, 'dead');
  t.true(Object.values(state.allocations).every((a) => a.status !== 'running'));
  // The restored folder has no scheduler state of the old platform: its apps are started afresh when
  // the restored platform starts (its app controller submits each app's job).
  t.false(fs.existsSync(path.join(fx.dataDir, 'scheduler')));
});
