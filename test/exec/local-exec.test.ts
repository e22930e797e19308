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
  pty.onData((data) => {
    output += data;
  });
  const exit = await new Promise<{ exitCode: number }>((resolve) => pty.onExit(resolve));
  t.is(exit.exitCode, 6);
  t.regex(output, /\/dev\/pts\/\d+/);
  t.regex(output, /17 91/);
  t.regex(output, /end-of-output/, 'the output is whole when the exit is reported');
});

test('a terminal that prints and exits at once has its whole output read before its exit is reported', async (t) => {
  // Twenty at once: without the platform holding each terminal's end, node-pty lost the last output of
  // nearly all of them (98 of 100 in five rounds).
  const { found } = await target(t);
  const exec = new LocalExec();
  const session = () =>
    new Promise<string>((resolve) => {
      const pty = exec.spawnPty(found, ['sh', '-c', 'head -c 6000 /dev/zero | tr "\\0" a; echo END-OF-OUTPUT'], {
        cols: 80,
        rows: 24,
      });
      let output = '';
      pty.onData((data) => {
        output += data;
      });
      pty.onExit(() => resolve(output));
    });
  const outputs = await Promise.all(Array.from({ length: 20 }, session));
  const cut = outputs.filter((output) => !output.includes('END-OF-OUTPUT'));
  t.is(
    cut.length,
    0,
    `${cut.length} of 20 sessions lost output: ${cut.map((o) => o.length).join(', ')} characters read`,
  );
  t.true(outputs.every((output) => output.split('a').length - 1 === 6000));
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
