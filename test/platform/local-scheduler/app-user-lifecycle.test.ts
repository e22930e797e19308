// tier: quick
/**
 * App users' lifecycle (ADR 0191): a deleted app's system user and files are removed after the grace
 * period unless its volumes hold data; users are made ready without blocking and looked up from
 * memory; a test worker removes the users it created when it ends.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { openControlStore } from '../../../store/index.js';
import { upsertAppSpec } from '../../../store/control/apps.js';
import { AppRetirement } from '../../../controllers/apps/app-retirement.js';
import { silentLogger } from '../../../platform/logger.js';
import {
  appUserIdentities,
  appUserName,
  ensureSystemUserAsync,
  listAppUsers,
} from '../../../platform/local-scheduler/isolation/app-identity.js';
import { readRetiredApps } from '../../../platform/local-scheduler/isolation/app-leftovers.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { REPO_ROOT } from '../../helpers/repo.js';

const asRoot = process.getuid?.() === 0;
const rootTest = asRoot ? test : test.skip;
const tag = process.pid.toString(36);

function userExists(name: string): boolean {
  return spawnSync('getent', ['passwd', name], { stdio: 'ignore' }).status === 0;
}

function appFolder(dataDir: string, app: string, volumeFile?: string): string {
  const dir = path.join(dataDir, 'app-data', app);
  fs.mkdirSync(path.join(dir, 'volumes', 'files'), { recursive: true });
  if (volumeFile) fs.writeFileSync(path.join(dir, 'volumes', 'files', volumeFile), 'kept');
  return dir;
}

rootTest(
  'a deleted app loses its user and files after the grace period, one with data in its volumes keeps both, a live app keeps both',
  async (t) => {
    const dataDir = tempDir(t);
    const { db } = openControlStore(dataDir);
    t.teardown(() => db.close());
    const [gone, keep, live] = [`gone-${tag}`, `keep-${tag}`, `live-${tag}`];
    const identities = appUserIdentities();
    for (const app of [gone, keep, live]) await identities.prepare(app, undefined);
    t.teardown(() => {
      for (const app of [gone, keep, live]) spawnSync('userdel', [appUserName(app)], { stdio: 'ignore' });
    });
    upsertAppSpec(db, { name: live, file: `${live}/infraspec.yaml`, findings: [], generation: null });
    const goneDir = appFolder(dataDir, gone);
    fs.mkdirSync(path.join(dataDir, 'releases', gone), { recursive: true });
    const keepDir = appFolder(dataDir, keep, 'data.bin');
    const liveDir = appFolder(dataDir, live);

    let now = new Date('2026-11-01T00:00:00Z');
    const retirement = new AppRetirement({
      db,
      dataDir,
      graceMs: 24 * 3_600_000,
      identities,
      logger: silentLogger(),
      now: () => now,
    });
    const first = await retirement.sweep();
    t.deepEqual([...first.pending].sort(), [gone, keep].sort(), 'deleted apps wait for their grace period');
    t.deepEqual(first.removed, []);
    t.true(userExists(appUserName(gone)));
    t.deepEqual(Object.keys(readRetiredApps(dataDir)).sort(), [gone, keep].sort(), 'first seen deleted is recorded');

    now = new Date('2026-11-02T00:00:01Z');
    const second = await retirement.sweep();
    t.deepEqual(second.removed, [gone]);
    t.deepEqual(second.kept, [keep]);
    t.false(userExists(appUserName(gone)), 'the deleted app’s user is removed');
    t.false(fs.existsSync(goneDir), 'and its data folder');
    t.false(fs.existsSync(path.join(dataDir, 'releases', gone)), 'and its releases');
    t.false(identities.prepared(gone, undefined), 'the driver forgets the removed user');
    t.true(userExists(appUserName(keep)), 'an app whose volumes hold data keeps its user');
    t.true(fs.existsSync(path.join(keepDir, 'volumes', 'files', 'data.bin')));
    t.true(userExists(appUserName(live)), 'a live app keeps its user');
    t.true(fs.existsSync(liveDir));
    t.deepEqual(Object.keys(readRetiredApps(dataDir)), [keep]);
  },
);

rootTest('app users are made ready without blocking, then resolved from memory as the host knows them', async (t) => {
  const app = `ready-${tag}`;
  t.teardown(() => void spawnSync('userdel', [appUserName(app)], { stdio: 'ignore' }));
  const identities = appUserIdentities();
  t.false(identities.prepared(app, undefined));
  await Promise.all([identities.prepare(app, undefined), identities.prepare(app, undefined)]);
  t.true(identities.prepared(app, undefined));
  const line = execFileSync('getent', ['passwd', appUserName(app)], { encoding: 'utf8' }).split(':');
  const identity = identities.resolve(app, undefined);
  t.is(identity?.uid, Number(line[2]));
  t.is(identity?.gid, Number(line[3]));
  t.is(identity?.source, 'app-user');
  // A task user is looked up once by prepare, then answered from memory.
  t.false(identities.prepared(app, 'nobody'));
  await identities.prepare(app, 'nobody');
  t.true(identities.prepared(app, 'nobody'));
  t.is(identities.resolve(app, 'nobody')?.uid, 65534);
  t.true((await listAppUsers()).some((u) => u.name === appUserName(app)));
});

rootTest(
  'a test worker removes the app users it created when it ends, and leaves users it found; under the whole suite it leaves them to the runner',
  async (t) => {
    const found = `svc-app-found-${tag}`;
    const made = `svc-app-made-${tag}`;
    await ensureSystemUserAsync(found);
    t.teardown(() => {
      spawnSync('userdel', [found], { stdio: 'ignore' });
      spawnSync('userdel', [made], { stdio: 'ignore' });
    });
    const script = `import { ensureSystemUserAsync } from './platform/local-scheduler/isolation/app-identity.ts';
await ensureSystemUserAsync(${JSON.stringify(found)});
await ensureSystemUserAsync(${JSON.stringify(made)});`;
    const worker = (underSuite: boolean) => {
      const env: NodeJS.ProcessEnv = { ...process.env, SVC_TEST_RUNNER_REMOVES_APP_USERS: underSuite ? '1' : '' };
      return spawnSync(
        process.execPath,
        ['--import=tsx', '--import=./test/helpers/remove-created-app-users.ts', '--input-type=module', '-e', script],
        { cwd: REPO_ROOT, encoding: 'utf8', env },
      );
    };
    // Under scripts/test.sh the runner removes the run's users once every test has ended (ADR 0191).
    const suite = worker(true);
    t.is(suite.status, 0, suite.stderr);
    t.true(userExists(made), 'under the whole suite the worker leaves the user it created to the runner');
    spawnSync('userdel', [made], { stdio: 'ignore' });
    const alone = worker(false);
    t.is(alone.status, 0, alone.stderr);
    t.false(userExists(made), 'the user the worker created is gone');
    t.true(userExists(found), 'the user that was there before stays');
  },
);
