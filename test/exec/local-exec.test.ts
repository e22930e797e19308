// tier: quick
/**
 * The local driver's exec adapter on a real process, in the form it takes when the platform is not
 * root (no namespace to enter, no user to switch to: the command runs as the platform's user with
 * the target's environment and folder), and its limits: timeout, output cap, a gone process.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import test, { type ExecutionContext } from 'ava';
import { execArgv, LocalExec, readExecTarget } from '../../platform/exec/index.js';
import { tempDir } from '../helpers/temp-dir.js';

async function target(t: ExecutionContext) {
  const cwd = fs.realpathSync(tempDir(t));
  const child = spawn('sleep', ['60'], { cwd, env: { PATH: process.env.PATH, FOO: 'from-target' } });
  t.teardown(() => child.kill('SIGKILL'));
  await once(child, 'spawn');
  const found = readExecTarget(child.pid!, false);
  if (found === undefined) throw new Error('no target');
  return { found, cwd };
}

test('not root: a command runs with the target process environment and folder, as the platform user', async (t) => {
  const { found, cwd } = await target(t);
  t.is(found.env.FOO, 'from-target');
  t.is(found.cwd, cwd);
  t.is(found.uid, process.getuid!());
  t.deepEqual(execArgv(found, ['id']), { file: 'id', args: [], cwd });
  const exec = new LocalExec();
  const result = await exec.run(found, ['sh', '-c', 'echo "$FOO"; pwd; cat'], {
    stdin: 'in',
    timeoutMs: 10_000,
    maxOutputBytes: 1024,
  });
  t.deepEqual(
    { exitCode: result.exitCode, stdout: result.stdout, truncated: result.truncated },
    { exitCode: 0, stdout: `from-target\n${cwd}\nin`, truncated: false },
  );

  const pty = exec.spawnPty(found, ['sh', '-c', 'tty; stty size; echo end-of-output; exit 6'], { cols: 91, rows: 17 });
  let output = '';
  // The terminal's last output can be read after its exit is reported: both are awaited.
  const ended = new Promise<void>((resolve) =>
    pty.onData((data) => {
      output += data;
      if (output.includes('end-of-output')) resolve();
    }),
  );
  const [exit] = await Promise.all([new Promise<{ exitCode: number }>((resolve) => pty.onExit(resolve)), ended]);
  t.is(exit.exitCode, 6);
  t.regex(output, /\/dev\/pts\/\d+/);
  t.regex(output, /17 91/);
});

test('as root the command enters the target mount namespace and drops to its user', async (t) => {
  const { found } = await target(t);
  const isolated = { ...found, isolated: true, uid: 1234, gid: 1235, groups: [] };
  const argv = execArgv(isolated, ['id']);
  t.is(argv.file, '/usr/bin/nsenter');
  t.deepEqual(argv.args, [
    '--target',
    String(found.pid),
    '--mount',
    '--wd',
    '--',
    '/usr/bin/setpriv',
    '--reuid',
    '1234',
    '--regid',
    '1235',
    '--clear-groups',
    '--no-new-privs',
    '--',
    'id',
  ]);
  if (process.getuid?.() !== 0) return;
  const result = await new LocalExec().run(isolated, ['sh', '-c', 'id -u; id -G; pwd'], {
    stdin: '',
    timeoutMs: 10_000,
    maxOutputBytes: 1024,
  });
  t.is(result.stdout, `1234\n1235\n${found.cwd}\n`, result.stderr);
});

test('limits: a command past its timeout is killed, output past the cap is cut, a gone process has no target', async (t) => {
  const { found } = await target(t);
  const exec = new LocalExec();
  const slow = await exec.run(found, ['sleep', '30'], { stdin: '', timeoutMs: 200, maxOutputBytes: 1024 });
  t.true(slow.timedOut);
  t.is(slow.signal, 'SIGKILL');
  const loud = await exec.run(found, ['sh', '-c', 'seq 1 1000'], { stdin: '', timeoutMs: 10_000, maxOutputBytes: 10 });
  t.true(loud.truncated);
  t.is(loud.stdout.length, 10);
  t.is(readExecTarget(2 ** 22 + 12345), undefined);
});
