// tier: quick
/**
 * The task spawner helper (ADR 0199): it starts tasks as a detached spawn from the platform would
 * (own session, exact environment, working directory, appended output), reports exec failures as
 * Node words them and exits as waitpid saw them, joins the CPU-weight group before the exec, applies
 * the ADR 0047 sandbox itself as root, and leaves its tasks running when it ends or dies.
 */
import fs from 'node:fs';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { readProcess } from '../../../platform/local-scheduler/index.js';
import {
  SpawnerGoneError,
  TaskSpawner,
  type SpawnRequest,
  type TaskWatch,
} from '../../../platform/local-scheduler/tasks/task-spawner.js';
import { waitForHealthyInstances } from '../../../domain/registry/index.js';
import { milliseconds } from '../../../domain/scheduler/index.js';
import { LocalRegistry } from '../../../platform/local-registry/index.js';
import { LocalScheduler } from '../../../platform/local-scheduler/index.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { fastRestart, SERVER_JS, serviceGroup, serviceJob, stopEverything } from './fixtures.js';

const rootTest = process.getuid?.() === 0 ? test : test.skip;

function helper(t: ExecutionContext): TaskSpawner {
  const spawner = TaskSpawner.start();
  if (spawner === undefined) throw new Error('perl is needed for the task spawner');
  t.teardown(() => spawner.close());
  return spawner;
}

/** A watch whose exit (or loss) is a promise. */
function watched(): TaskWatch & { exited: Promise<[number | null, NodeJS.Signals | null] | 'lost'> } {
  let settle!: (value: [number | null, NodeJS.Signals | null] | 'lost') => void;
  const exited = new Promise<[number | null, NodeJS.Signals | null] | 'lost'>((resolve) => (settle = resolve));
  return { exited, exit: (code, signal) => settle([code, signal]), lost: () => settle('lost') };
}

function request(dir: string, file: string, args: string[], extra: Partial<SpawnRequest> = {}): SpawnRequest {
  return {
    file,
    args,
    cwd: dir,
    env: { PATH: '/usr/bin:/bin' },
    stdoutPath: path.join(dir, 'out.log'),
    stderrPath: path.join(dir, 'err.log'),
    ...extra,
  };
}

/** True while `pid` runs (a zombie has ended). */
function alive(pid: number): boolean {
  const state = readProcess(pid)?.state;
  return state !== undefined && state !== 'Z';
}

/** Resolves once `pid` has exec'd `program` (its command line is no longer the helper's). */
async function execed(pid: number, program: string): Promise<void> {
  for (;;) {
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (cmdline[0]?.endsWith(program)) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test('the spawner starts a task in its own session with exactly its environment, working directory and appended output, and reports its exit code', async (t) => {
  const dir = tempDir(t);
  fs.writeFileSync(path.join(dir, 'out.log'), 'before\n');
  const spawner = helper(t);
  const watch = watched();
  const { pid } = await spawner.spawn(
    request(dir, '/bin/sh', ['-c', 'echo "$GREETING|$(pwd)|$(env | grep -c .)"; exit 3'], {
      env: { GREETING: 'hello world', PATH: '/usr/bin:/bin' },
    }),
    watch,
  );
  t.true(pid > 0);
  t.deepEqual(await watch.exited, [3, null]);
  // env counts GREETING, PATH and the shell's own PWD (and nothing of the platform's).
  t.is(fs.readFileSync(path.join(dir, 'out.log'), 'utf8'), `before\nhello world|${dir}|3\n`);

  const sleeper = watched();
  const long = await spawner.spawn(request(dir, '/bin/sleep', ['30']), sleeper);
  await execed(long.pid, 'sleep');
  // Detached as before: its own session and process group, so a drain signals its whole tree.
  const stat = fs.readFileSync(`/proc/${long.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  t.is(Number(stat[2]), long.pid, 'process group');
  t.is(Number(stat[3]), long.pid, 'session');
  t.is(readProcess(long.pid)?.ppid, spawner.pid);
  process.kill(long.pid, 'SIGTERM');
  t.deepEqual(await sleeper.exited, [null, 'SIGTERM']);
});

test('a task that cannot be started is refused as Node words it, and the spawner goes on', async (t) => {
  const dir = tempDir(t);
  const spawner = helper(t);
  await t.throwsAsync(spawner.spawn(request(dir, '/nonexistent/program', []), watched()), {
    message: 'spawn /nonexistent/program ENOENT',
  });
  await t.throwsAsync(spawner.spawn(request(path.join(dir, 'missing'), '/bin/true', []), watched()), {
    message: 'spawn /bin/true ENOENT',
  });
  const watch = watched();
  await spawner.spawn(request(dir, '/bin/true', []), watch);
  t.deepEqual(await watch.exited, [0, null]);
});

test('the child joins its CPU weight group before it execs', async (t) => {
  const dir = tempDir(t);
  const spawner = helper(t);
  const group = path.join(dir, 'cgroup', 'alloc-1');
  fs.mkdirSync(path.dirname(group));
  const watch = watched();
  const { pid, warning } = await spawner.spawn(
    request(dir, '/bin/true', [], { cgroup: { group, file: 'cpu.weight', value: '42' } }),
    watch,
  );
  await watch.exited;
  t.is(warning, undefined);
  t.is(fs.readFileSync(path.join(group, 'cpu.weight'), 'utf8'), '42');
  t.is(fs.readFileSync(path.join(group, 'cgroup.procs'), 'utf8'), String(pid));

  // A group that cannot be made: the task runs without a weight, and the answer says why.
  const blocked = watched();
  const answer = await spawner.spawn(
    request(dir, '/bin/true', [], {
      cgroup: { group: path.join(dir, 'no', 'such', 'group'), file: 'cpu.weight', value: '1' },
    }),
    blocked,
  );
  t.deepEqual(await blocked.exited, [0, null]);
  t.regex(answer.warning ?? '', /CPU weight not applied/);
});

rootTest(
  'as root, the spawner sandboxes a task itself: its user without other groups, no new privileges, its limits and a private /tmp',
  async (t) => {
    const dir = tempDir(t);
    const spawner = helper(t);
    t.true(spawner.sandboxes);
    const privateTmp = path.join(dir, 'tmp');
    fs.mkdirSync(privateTmp);
    fs.chownSync(privateTmp, 65534, 65534);
    fs.chmodSync(dir, 0o777);
    const watch = watched();
    const { pid } = await spawner.spawn(
      request(dir, '/bin/sh', ['-c', 'touch /tmp/written-inside; exec sleep 30'], {
        sandbox: {
          nofile: 1234,
          binds: [{ source: privateTmp, target: '/tmp' }],
          identity: { uid: 65534, gid: 65534, groups: [], nproc: 777 },
        },
      }),
      watch,
    );
    await execed(pid, 'sleep');
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    t.regex(status, /^Uid:\s+65534\s+65534\s+65534\s+65534$/m);
    t.regex(status, /^Gid:\s+65534\s+65534\s+65534\s+65534$/m);
    t.regex(status, /^Groups:\s*$/m);
    t.regex(status, /^NoNewPrivs:\s+1$/m);
    const limits = fs.readFileSync(`/proc/${pid}/limits`, 'utf8');
    t.regex(limits, /^Max open files\s+1234\s+1234\s+files/m);
    t.regex(limits, /^Max processes\s+777\s+777\s+processes/m);
    const tmp = fs
      .readFileSync(`/proc/${pid}/mountinfo`, 'utf8')
      .split('\n')
      .map((line) => line.split(' '))
      .find((fields) => fields[4] === '/tmp');
    t.is(tmp?.[3], privateTmp);
    // Private propagation: no peer group shared with the host.
    t.false((tmp ?? []).slice(6, (tmp ?? []).indexOf('-')).some((field) => field.startsWith('shared:')));
    t.true(fs.existsSync(path.join(privateTmp, 'written-inside')));
    t.false(fs.existsSync('/tmp/written-inside'));
    process.kill(pid, 'SIGKILL');
    t.deepEqual(await watch.exited, [null, 'SIGKILL']);
  },
);

/** The pid a spare wrote into its group's `cgroup.procs` once it joined it (a plain file here). */
async function joined(group: string): Promise<number> {
  for (;;) {
    const text = fs.existsSync(path.join(group, 'cgroup.procs'))
      ? fs.readFileSync(path.join(group, 'cgroup.procs'), 'utf8')
      : '';
    if (/^\d+$/.test(text)) return Number(text);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test('a spare joins its group ahead, and the start that takes its id runs in it without joining again; the helper keeps the count and its spares end with it', async (t) => {
  const dir = tempDir(t);
  const spawner = helper(t);
  const groups = path.join(dir, 'cgroup');
  fs.mkdirSync(groups);
  spawner.keepSpares(1, (id) => path.join(groups, id));
  const id = spawner.takeSpare();
  if (id === undefined) throw new Error('no spare');
  const group = path.join(groups, id);
  const sparePid = await joined(group);
  // Written ahead, by the spare: a start that joined again would write its pid over this mark.
  fs.writeFileSync(path.join(group, 'cgroup.procs'), 'joined ahead');
  const watch = watched();
  const { pid, warning } = await spawner.spawn(
    request(dir, '/bin/sh', ['-c', 'echo started; grep SigIgn /proc/$$/status'], {
      cgroup: { group, file: 'cpu.weight', value: '42' },
    }),
    watch,
  );
  t.is(pid, sparePid);
  t.is(warning, undefined);
  t.deepEqual(await watch.exited, [0, null]);
  // No signal ignored: the helper ignores SIGPIPE itself, its tasks do not.
  t.regex(fs.readFileSync(path.join(dir, 'out.log'), 'utf8'), /^started\nSigIgn:\s+0+\n$/);
  t.is(fs.readFileSync(path.join(group, 'cpu.weight'), 'utf8'), '42');
  t.is(fs.readFileSync(path.join(group, 'cgroup.procs'), 'utf8'), 'joined ahead');

  // Taking one forked the next; it waits in its own group, and exits when the helper ends.
  t.deepEqual(spawner.unusedSpares().length, 1);
  const next = await joined(path.join(groups, spawner.unusedSpares()[0]!));
  t.true(alive(next));
  spawner.close();
  while (alive(next)) await new Promise((resolve) => setTimeout(resolve, 10));
  t.is(spawner.takeSpare(), undefined);
});

test('when the spawner dies its tasks run on and are reported lost, and later starts are refused as gone; close leaves tasks running', async (t) => {
  const dir = tempDir(t);
  const spawner = helper(t);
  const watch = watched();
  const { pid } = await spawner.spawn(request(dir, '/bin/sleep', ['30']), watch);
  t.teardown(() => {
    if (alive(pid)) process.kill(pid, 'SIGKILL');
  });
  await execed(pid, 'sleep');
  process.kill(spawner.pid!, 'SIGKILL');
  t.is(await watch.exited, 'lost');
  t.false(spawner.alive);
  t.true(alive(pid));
  await t.throwsAsync(spawner.spawn(request(dir, '/bin/true', []), watched()), { instanceOf: SpawnerGoneError });

  const second = helper(t);
  const other = await second.spawn(request(dir, '/bin/sleep', ['30']), watched());
  t.teardown(() => {
    if (alive(other.pid)) process.kill(other.pid, 'SIGKILL');
  });
  await execed(other.pid, 'sleep');
  second.close();
  t.true(alive(other.pid));
});

rootTest(
  'a driver keeps spares ahead, their cgroups joined and their folders made, a placement takes one, and close removes the rest',
  async (t) => {
    const root = tempDir(t);
    const appDir = path.join(root, 'app');
    fs.mkdirSync(appDir);
    fs.writeFileSync(path.join(appDir, 'server.mjs'), SERVER_JS);
    const registry = new LocalRegistry();
    const allocs = path.join(root, 'data', 'allocs');
    const driver = await LocalScheduler.open({
      dataDir: path.join(root, 'data'),
      registry,
      monitorInterval: milliseconds(40),
      defaultRestart: fastRestart,
    });
    t.teardown(() => stopEverything(driver));
    const spareIds = async (): Promise<string[]> => {
      for (;;) {
        const ids = fs.existsSync(allocs) ? fs.readdirSync(allocs) : [];
        if (ids.length >= 2 && ids.every((id) => fs.existsSync(path.join(allocs, id, 'logs', 'stderr.log'))))
          return ids;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    const spares = await spareIds();
    t.is(spares.length, 2);
    for (const id of spares) {
      // Root's and private until a start gives them their owners and modes.
      const stat = fs.statSync(path.join(allocs, id));
      t.is(stat.uid, 0);
      t.is(stat.mode & 0o777, 0o700);
    }
    await driver.submitJob(
      serviceJob(
        'spare-web',
        serviceGroup({ command: [process.execPath, 'server.mjs'], workdir: appDir, serviceName: 'spare-web' }),
      ),
    );
    await waitForHealthyInstances(registry, 'spare-web', { timeoutMs: 10_000 });
    const [alloc] = await driver.listAllocations({ jobId: 'spare-web' });
    t.true(spares.includes(alloc!.id));
    // Its folder got the owners and modes of a start (ADR 0047), and its process runs in its cgroup
    // (as root the driver applies CPU weights; spares are kept only then).
    t.is(fs.statSync(path.join(allocs, alloc!.id)).mode & 0o777, 0o750);
    t.regex(fs.readFileSync(`/proc/${alloc!.task.pid!}/cgroup`, 'utf8'), new RegExp(`svc-apps/${alloc!.id}`));
    // Another spare was made for the next start.
    const after = await spareIds();
    t.is(after.length, 3);
    await stopEverything(driver);
    const left = fs.readdirSync(allocs);
    t.deepEqual(left, [alloc!.id]);
  },
);

test('a driver without the helper spawns services from its own process as before', async (t) => {
  const root = tempDir(t);
  const appDir = path.join(root, 'app');
  fs.mkdirSync(appDir);
  fs.writeFileSync(path.join(appDir, 'server.mjs'), SERVER_JS);
  const registry = new LocalRegistry();
  const driver = await LocalScheduler.open({
    dataDir: path.join(root, 'data'),
    registry,
    monitorInterval: milliseconds(40),
    defaultRestart: fastRestart,
    spawnHelper: false,
  });
  t.teardown(() => stopEverything(driver));
  await driver.submitJob(
    serviceJob(
      'direct-web',
      serviceGroup({ command: [process.execPath, 'server.mjs'], workdir: appDir, serviceName: 'direct-web' }),
    ),
  );
  await waitForHealthyInstances(registry, 'direct-web', { timeoutMs: 10_000 });
  const [alloc] = await driver.listAllocations({ jobId: 'direct-web' });
  t.is(readProcess(alloc!.task.pid!)?.ppid, process.pid);
});
