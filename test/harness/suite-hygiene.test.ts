// tier: quick
/**
 * The runner's checks after the last test (ADR 0226): processes a test left running are found by the
 * test file their environment names or by the test folder they run in, stopped, and named; a change
 * to the checkout is found, whether in a clean file or one already modified before the run.
 */
import test from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { findLeftovers, readLedger, stillRunning } from '../../scripts/leftover-processes.js';
import { changedPaths, treeState } from '../../scripts/tracked-changes.js';
import { isProcessAlive } from '../../platform/local-scheduler/tasks/process-table.js';
import { REPO_ROOT } from '../helpers/repo.js';
import { tempDir } from '../helpers/temp-dir.js';

function sleeper(options: { env?: NodeJS.ProcessEnv; cwd?: string }) {
  const child = spawn('sleep', ['300'], { detached: true, stdio: 'ignore', ...options });
  child.unref();
  return child.pid!;
}

test('processes a test left running are named by their test file, stopped, and fail the run', async (t) => {
  const root = tempDir(t);
  // Test folders of their own, and a test file name no other test uses: the check sees only these.
  const tmpRoot = path.join(root, 'tmp');
  const folder = path.join(tmpRoot, 'svc-test-abc');
  fs.mkdirSync(folder, { recursive: true });
  const marker = `test/harness/fake-${randomUUID()}`;
  const ledger = path.join(root, 'ledger');
  fs.writeFileSync(ledger, `${folder}\t${marker}-folder.test.ts\n`);
  const byEnvironment = sleeper({ env: { ...process.env, SVC_TEST_FILE: `${marker}-env.test.ts` } });
  const { SVC_TEST_FILE: _dropped, ...bare } = process.env;
  const byFolder = sleeper({ env: bare, cwd: folder });
  const bystander = sleeper({ env: bare, cwd: root });
  t.teardown(() => {
    for (const pid of [byEnvironment, byFolder, bystander])
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
  });

  const found = findLeftovers({ tmpRoot, ledger: readLedger(ledger), only: marker });
  t.deepEqual(
    found.map((l) => [l.pid, l.testFile]).sort(),
    [
      [byEnvironment, `${marker}-env.test.ts`],
      [byFolder, `${marker}-folder.test.ts`],
    ].sort(),
  );

  const run = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      'scripts/leftover-processes.ts',
      '--ledger',
      ledger,
      '--tmp-root',
      tmpRoot,
      '--only',
      marker,
      '--grace-ms',
      '300',
    ],
    { cwd: REPO_ROOT, encoding: 'utf8' },
  );
  t.is(run.status, 1, run.stdout + run.stderr);
  t.regex(run.stdout, new RegExp(`${marker}-env\\.test\\.ts: pid ${byEnvironment} sleep 300`));
  t.regex(run.stdout, new RegExp(`${marker}-folder\\.test\\.ts: pid ${byFolder} sleep 300`));
  t.false(isProcessAlive(byEnvironment, undefined));
  t.false(isProcessAlive(byFolder, undefined));
  t.true(isProcessAlive(bystander, undefined), 'a process outside the test folders is left alone');

  const clean = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'scripts/leftover-processes.ts', '--tmp-root', tmpRoot, '--only', marker],
    { cwd: REPO_ROOT, encoding: 'utf8' },
  );
  t.is(clean.status, 0, clean.stdout + clean.stderr);
});

test('a process that ends on its own within the grace period is no leftover', async (t) => {
  const marker = `test/harness/fake-${randomUUID()}`;
  const env = { ...process.env, SVC_TEST_FILE: `${marker}.test.ts` };
  const ending = spawn('sleep', ['0.3'], { env, stdio: 'ignore' }).pid!;
  const staying = sleeper({ env });
  t.teardown(() => process.kill(staying, 'SIGKILL'));
  const found = findLeftovers({ only: marker });
  t.deepEqual(found.map((l) => l.pid).sort(), [ending, staying].sort());
  t.deepEqual(
    (await stillRunning(found, 3000)).map((l) => l.pid),
    [staying],
  );
});

test('a change to the checkout is found: a tracked file, a new file, and a file already modified that is rewritten', (t) => {
  const repo = tempDir(t);
  const git = (...args: string[]) => {
    const result = spawnSync('git', args, { cwd: repo, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(result.stderr);
  };
  git('init', '-q');
  fs.writeFileSync(path.join(repo, 'a.txt'), 'a');
  fs.writeFileSync(path.join(repo, 'b.png'), 'b');
  fs.writeFileSync(path.join(repo, '.gitignore'), 'ignored/\n');
  git('add', '.');
  git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'files');
  // Modified before the run, as a developer's work in progress is.
  fs.writeFileSync(path.join(repo, 'a.txt'), 'work in progress');
  const before = treeState(repo)!;
  t.deepEqual(changedPaths(before, treeState(repo)!), [], 'nothing changed');
  fs.mkdirSync(path.join(repo, 'ignored'));
  fs.writeFileSync(path.join(repo, 'ignored', 'x'), 'x');
  t.deepEqual(changedPaths(before, treeState(repo)!), [], 'an ignored file is no change');
  fs.writeFileSync(path.join(repo, 'b.png'), 'rewritten');
  fs.writeFileSync(path.join(repo, 'a.txt'), 'rewritten by a test');
  fs.writeFileSync(path.join(repo, 'new.txt'), 'n');
  t.deepEqual(changedPaths(before, treeState(repo)!), ['a.txt', 'b.png', 'new.txt']);
  t.is(treeState(path.join(repo, '..')), undefined, 'outside a checkout there is no state');
});
