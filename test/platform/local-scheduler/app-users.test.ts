// tier: quick
/**
 * Apps never run as root: as root, the local driver runs each app as its own system user, under
 * rlimits, with a private /tmp, and with folders only that user may read (ADR 0047). Each access
 * is checked by a process running with the app's uid, as the app would.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import test, { type ExecutionContext } from 'ava';
import { pino } from 'pino';
import { waitForHealthyInstances } from '../../../domain/registry/index.js';
import { milliseconds, waitForAllocations, type Allocation, type JobSpec } from '../../../domain/scheduler/index.js';
import { LocalRegistry } from '../../../platform/local-registry/index.js';
import {
  appUserName,
  ensureSystemUser,
  LocalScheduler,
  MAX_USER_NAME,
  platformUserIdentities,
} from '../../../platform/local-scheduler/index.js';
import { fastRestart, SERVER_JS, serviceGroup, stopEverything } from './fixtures.js';

const asRoot = process.getuid?.() === 0;
const rootTest = asRoot ? test : test.skip;

interface Ids {
  readonly uid: number;
  readonly gid: number;
  readonly groups: number[];
}

/** Real, effective, saved and filesystem uid and gid, and the supplementary groups of a live process. */
function idsOf(pid: number): { uids: number[]; gids: number[]; groups: number[] } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) =>
    (new RegExp(`^${name}:[ \\t]*(.*)$`, 'm').exec(status)?.[1] ?? '').split(/\s+/).filter(Boolean).map(Number);
  return { uids: field('Uid'), gids: field('Gid'), groups: field('Groups') };
}

/**
 * The real uid of `pid` once its wrappers have exec'd the program (until then the fresh pid is still
 * the platform's; nothing signals the exec, so /proc is read until the command line is the program's).
 */
async function uidOnceExeced(pid: number, timeoutMs = 5000): Promise<number | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (cmdline[0] === process.execPath) return idsOf(pid).uids[0];
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return undefined;
}

/** Runs `argv` as the given user (no supplementary groups), as the app would. */
function runAs(ids: Ids, argv: string[]): { status: number | null; stderr: string; stdout: string } {
  const result = spawnSync(
    'setpriv',
    [
      '--reuid',
      String(ids.uid),
      '--regid',
      String(ids.gid),
      ids.groups.length > 0 ? `--groups=${ids.groups.join(',')}` : '--clear-groups',
      '--',
      ...argv,
    ],
    { encoding: 'utf8' },
  );
  return { status: result.status, stderr: result.stderr, stdout: result.stdout };
}

/** A data folder outside /tmp, so the task's private /tmp hides nothing of its own. */
function dataRoot(t: ExecutionContext): string {
  fs.mkdirSync('/var/tmp', { recursive: true });
  const dir = fs.mkdtempSync(path.join('/var/tmp', 'svc-app-users-'));
  fs.chmodSync(dir, 0o711);
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function open(dataDir: string): Promise<{ driver: LocalScheduler; registry: LocalRegistry }> {
  const registry = new LocalRegistry();
  const driver = await LocalScheduler.open({
    dataDir,
    registry,
    monitorInterval: milliseconds(40),
    defaultRestart: fastRestart,
    limits: { nofile: 1234, nproc: 777 },
  });
  return { driver, registry };
}

function appJob(app: string, appDir: string, extra: Partial<JobSpec['taskGroups'][number]['task']> = {}): JobSpec {
  const group = serviceGroup({ command: [process.execPath, 'server.mjs'], workdir: appDir, serviceName: `${app}-web` });
  return { id: `${app}-web`, app, type: 'service', taskGroups: [{ ...group, task: { ...group.task, ...extra } }] };
}

async function running(driver: LocalScheduler, jobId: string): Promise<Allocation> {
  const [alloc] = await waitForAllocations(driver, (a) => a.length === 1 && a[0]!.task.state === 'running', {
    filter: { jobId },
  });
  return alloc!;
}

function setup(t: ExecutionContext): { root: string; dataDir: string; appDir: string } {
  const root = dataRoot(t);
  const appDir = path.join(root, 'app');
  fs.mkdirSync(appDir);
  fs.writeFileSync(path.join(appDir, 'server.mjs'), SERVER_JS);
  return { root, dataDir: path.join(root, 'data'), appDir };
}

rootTest(
  'an app process runs as its own system user with no root group, under its rlimits and with a private /tmp',
  async (t) => {
    const { dataDir, appDir } = setup(t);
    const { driver, registry } = await open(dataDir);
    t.teardown(() => stopEverything(driver));
    await driver.submitJob(appJob('iso-alpha', appDir));
    const [instance] = await waitForHealthyInstances(registry, 'iso-alpha-web', { timeoutMs: 10_000 });
    const alloc = await running(driver, 'iso-alpha-web');
    const pid = alloc.task.pid!;
    const user = ensureSystemUser('svc-app-iso-alpha');
    const ids = idsOf(pid);
    t.deepEqual(ids.uids, [user.uid, user.uid, user.uid, user.uid]);
    t.deepEqual(ids.gids, [user.gid, user.gid, user.gid, user.gid]);
    t.not(user.uid, 0);
    t.deepEqual(ids.groups, []);
    t.regex(fs.readFileSync(`/proc/${pid}/status`, 'utf8'), /^NoNewPrivs:\s+1$/m);
    const limits = fs.readFileSync(`/proc/${pid}/limits`, 'utf8');
    t.regex(limits, /^Max open files\s+1234\s+1234\s+files/m);
    t.regex(limits, /^Max processes\s+777\s+777\s+processes/m);
    const env = (await (await fetch(`http://127.0.0.1:${instance!.port}/env`)).json()) as Record<string, string>;
    t.is(env.USER, 'svc-app-iso-alpha');
    t.is(env.TMPDIR, '/tmp');
    t.is(env.HOME, path.join(dataDir, 'app-data', 'iso-alpha'));
    t.is(fs.statSync(env.HOME!).uid, user.uid);
    // /tmp of the task is the allocation's own tmp folder, mounted in its own namespace.
    const mountinfo = fs
      .readFileSync(`/proc/${pid}/mountinfo`, 'utf8')
      .split('\n')
      .map((line) => line.split(' '));
    t.true(
      mountinfo.some((f) => f[4] === '/tmp' && (f[3] ?? '').endsWith(path.join(alloc.id, 'tmp'))),
      'no private /tmp mount',
    );
    t.true(
      alloc.task.events.some(
        (e) => e.type === 'Started' && /as svc-app-iso-alpha \(uid \d+, gid \d+\)/.test(e.message),
      ),
    );
  },
);

rootTest(
  'an app cannot read the driver state, another app’s folders or its secrets, nor signal another app’s process',
  async (t) => {
    const { dataDir, appDir } = setup(t);
    const { driver, registry } = await open(dataDir);
    t.teardown(() => stopEverything(driver));
    const secret = { destination: 'secrets/token', contents: 's3cr3t-value', mode: 0o400 };
    await driver.submitJob(appJob('iso-bravo', appDir, { files: [secret] }));
    await driver.submitJob(appJob('iso-charlie', appDir));
    await waitForHealthyInstances(registry, 'iso-bravo-web', { timeoutMs: 10_000 });
    await waitForHealthyInstances(registry, 'iso-charlie-web', { timeoutMs: 10_000 });
    const bravo = await running(driver, 'iso-bravo-web');
    const charlie = await running(driver, 'iso-charlie-web');
    const bravoUser = ensureSystemUser('svc-app-iso-bravo');
    const charlieUser = ensureSystemUser('svc-app-iso-charlie');
    const asCharlie: Ids = { uid: charlieUser.uid, gid: charlieUser.gid, groups: [] };
    const asBravo: Ids = { uid: bravoUser.uid, gid: bravoUser.gid, groups: [] };

    // The scheduler variable file: 0400, owned by its app, readable by it only.
    const token = path.join(dataDir, 'allocs', bravo.id, 'secrets', 'token');
    const stat = fs.statSync(token);
    t.is(stat.mode & 0o777, 0o400);
    t.is(stat.uid, bravoUser.uid);
    t.is(runAs(asBravo, ['cat', token]).stdout, 's3cr3t-value');
    const denied = runAs(asCharlie, ['cat', token]);
    t.not(denied.status, 0);
    t.regex(denied.stderr, /Permission denied/);
    // Another app's allocation, data folder and logs; the driver's state (every task's env).
    for (const target of [
      path.join(dataDir, 'allocs', bravo.id, 'logs', 'stdout.log'),
      path.join(dataDir, 'scheduler', 'state.json'),
    ]) {
      const read = runAs(asCharlie, ['cat', target]);
      t.not(read.status, 0, target);
      t.regex(read.stderr, /Permission denied/, target);
    }
    const listing = runAs(asCharlie, ['ls', path.join(dataDir, 'app-data', 'iso-bravo')]);
    t.regex(listing.stderr, /Permission denied/);
    t.regex(runAs(asCharlie, ['ls', dataDir]).stderr, /Permission denied/);
    // Its own allocation's logs are readable by its group.
    t.is(runAs(asBravo, ['test', '-r', path.join(dataDir, 'allocs', bravo.id, 'logs', 'stdout.log')]).status, 0);
    t.not(runAs(asBravo, ['test', '-w', path.join(dataDir, 'allocs', bravo.id, 'secrets')]).status, 0);

    // Signals across apps: EPERM.
    const kill = runAs(asCharlie, ['kill', '-TERM', String(bravo.task.pid)]);
    t.not(kill.status, 0);
    t.regex(kill.stderr, /Operation not permitted/);
    t.is(runAs(asCharlie, ['kill', '-0', String(charlie.task.pid)]).status, 0);
    t.is((await driver.getAllocation(bravo.id))!.task.restarts, 0);
  },
);

rootTest(
  'a task naming a non-root uid and gid runs as them with its app group, and a root USER is refused for the app user',
  async (t) => {
    const { dataDir, appDir } = setup(t);
    const { driver, registry } = await open(dataDir);
    t.teardown(() => stopEverything(driver));
    await driver.submitJob(
      appJob('iso-delta', appDir, {
        user: '4242:4343',
        files: [{ destination: 'secrets/key', contents: 'k', mode: 0o400 }],
      }),
    );
    await driver.submitJob(appJob('iso-echo', appDir, { user: 'root' }));
    await waitForHealthyInstances(registry, 'iso-delta-web', { timeoutMs: 10_000 });
    await waitForHealthyInstances(registry, 'iso-echo-web', { timeoutMs: 10_000 });
    const delta = await running(driver, 'iso-delta-web');
    const app = ensureSystemUser('svc-app-iso-delta');
    const ids = idsOf(delta.task.pid!);
    t.deepEqual(ids.uids, [4242, 4242, 4242, 4242]);
    t.deepEqual(ids.gids, [4343, 4343, 4343, 4343]);
    t.deepEqual(ids.groups, [app.gid]);
    t.is(fs.statSync(path.join(dataDir, 'allocs', delta.id, 'secrets', 'key')).uid, 4242);
    const echo = await running(driver, 'iso-echo-web');
    t.is(idsOf(echo.task.pid!).uids[0], ensureSystemUser('svc-app-iso-echo').uid);
    t.true(
      echo.task.events.some(
        (e) => e.type === 'Started' && /USER root is root, which apps never run as/.test(e.message),
      ),
    );
  },
);

rootTest(
  'the local driver re-adopts a process of a per-app user after a restart, still running as that user',
  async (t) => {
    const { dataDir, appDir } = setup(t);
    const first = await open(dataDir);
    await first.driver.submitJob(appJob('iso-foxtrot', appDir));
    await waitForHealthyInstances(first.registry, 'iso-foxtrot-web', { timeoutMs: 10_000 });
    const before = await running(first.driver, 'iso-foxtrot-web');
    await first.driver.close();
    const second = await open(dataDir);
    t.teardown(() => stopEverything(second.driver));
    const after = (await second.driver.getAllocation(before.id))!;
    t.is(after.task.pid, before.task.pid);
    t.is(after.status, 'running');
    t.regex(after.task.lastEventMessage ?? '', /Re-adopted running process/);
    await waitForHealthyInstances(second.registry, 'iso-foxtrot-web', { timeoutMs: 10_000 });
    t.is(idsOf(after.task.pid!).uids[0], ensureSystemUser('svc-app-iso-foxtrot').uid);
    // A crash of the adopted process is restarted as the same user.
    process.kill(before.task.pid!, 'SIGKILL');
    const [restarted] = await waitForAllocations(
      second.driver,
      (a) => a.length === 1 && a[0]!.task.restarts === 1 && a[0]!.task.state === 'running',
      { filter: { jobId: 'iso-foxtrot-web' }, timeoutMs: 10_000 },
    );
    t.is(await uidOnceExeced(restarted!.task.pid!), ensureSystemUser('svc-app-iso-foxtrot').uid);
  },
);

test('appUserName keeps short names and cuts long or unusual ones to 32 characters with a hash, never colliding', (t) => {
  t.is(appUserName('hello-web'), 'svc-app-hello-web');
  const long = appUserName('a-very-long-application-name-for-the-billing-team');
  t.true(long.length <= MAX_USER_NAME);
  t.regex(long, /^svc-app-a-very-long-app-[0-9a-f]{8}$/);
  t.not(appUserName('a-very-long-application-name-for-the-billing-team-2'), long);
  t.not(appUserName('Shop'), appUserName('shop'));
  t.true(appUserName('Shop').length <= MAX_USER_NAME);
});

rootTest('an app with a name longer than the user-name limit gets a hashed system user that runs it', async (t) => {
  const { dataDir, appDir } = setup(t);
  const { driver, registry } = await open(dataDir);
  t.teardown(() => stopEverything(driver));
  const app = 'iso-a-name-much-longer-than-thirty-two-characters';
  await driver.submitJob(appJob(app, appDir));
  await waitForHealthyInstances(registry, `${app}-web`, { timeoutMs: 10_000 });
  const alloc = await running(driver, `${app}-web`);
  const name = appUserName(app);
  t.true(name.length <= MAX_USER_NAME);
  const passwd = spawnSync('getent', ['passwd', name], { encoding: 'utf8' }).stdout.split(':');
  t.is(passwd[6]?.trim(), '/usr/sbin/nologin');
  t.is(idsOf(alloc.task.pid!).uids[0], Number(passwd[2]));
  t.is(os.userInfo().uid, 0);
});

test('a driver that cannot switch users says at start that apps share its user, and its tasks say so', async (t) => {
  const { dataDir, appDir } = setup(t);
  const lines: string[] = [];
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    }),
  );
  const registry = new LocalRegistry();
  const driver = await LocalScheduler.open({
    dataDir,
    registry,
    logger,
    monitorInterval: milliseconds(40),
    identities: platformUserIdentities('the platform runs as svc (uid 1000), not root'),
  });
  t.teardown(() => stopEverything(driver));
  const warning = lines
    .map((l) => JSON.parse(l) as { level: number; msg: string; reason?: string })
    .find((l) => /apps share the platform's user/.test(l.msg));
  t.is(warning?.level, 40);
  t.is(warning?.reason, 'the platform runs as svc (uid 1000), not root');
  await driver.submitJob(appJob('iso-golf', appDir));
  const alloc = await running(driver, 'iso-golf-web');
  t.true(alloc.task.events.some((e) => e.type === 'Started' && /as the platform's user/.test(e.message)));
});

rootTest(
  'a driver whose data folder lies under a folder app users cannot enter says so at start, naming the folder and the fix',
  async (t) => {
    const root = dataRoot(t);
    // A checkout under /root (0700), say: app users cannot pass through it to their releases.
    const closed = path.join(root, 'closed');
    fs.mkdirSync(closed, { mode: 0o700 });
    fs.chmodSync(closed, 0o700);
    const lines: string[] = [];
    const logger = pino(
      { level: 'info' },
      new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(chunk.toString());
          done();
        },
      }),
    );
    const driver = await LocalScheduler.open({
      dataDir: path.join(closed, 'data'),
      registry: new LocalRegistry(),
      logger,
      monitorInterval: milliseconds(40),
    });
    t.teardown(() => stopEverything(driver));
    const error = lines
      .map((l) => JSON.parse(l) as { level: number; msg: string; blocked?: string })
      .find((l) => l.level === 50);
    t.is(error?.blocked, closed);
    t.regex(error?.msg ?? '', new RegExp(`^app users cannot enter ${closed}, .*chmod o\\+x ${closed}`));

    // Opened to passage (enter, not list): no error.
    fs.chmodSync(closed, 0o711);
    lines.length = 0;
    const second = await LocalScheduler.open({
      dataDir: path.join(closed, 'data2'),
      registry: new LocalRegistry(),
      logger,
      monitorInterval: milliseconds(40),
    });
    t.teardown(() => stopEverything(second));
    t.false(
      lines.some((l) => (JSON.parse(l) as { level: number }).level >= 50),
      lines.join(''),
    );
  },
);
