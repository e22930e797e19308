// tier: full
/**
 * `svc exec` against a real app: one-shot with a command (exits with the remote exit code), with
 * standard input piped (a script), an unknown app (exit 4), and interactive in a real terminal
 * under tmux (keys typed, the screen read back, the window resized, the exit code kept).
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { runSvc, SVC_BIN, SVC_FROM_SOURCE } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp-dir.js';
import { startExecPlane } from './exec-harness.js';

const hasTmux = spawnSync('tmux', ['-V']).status === 0;

test('svc exec runs a command once and exits with its exit code; stdin that is not a terminal is the input; an unknown app exits 4', async (t) => {
  const { plane, pid } = await startExecPlane(t);
  const env = { SVC_API_URL: plane.url, SVC_API_TOKEN: '' };
  // Four CLIs started from source at once: generous timeouts for a loaded machine.
  const options = { env, timeoutMs: 120_000 };
  const [id, failed, unknown, idle] = await Promise.all([
    runSvc(['exec', 'hello', '--', 'id', '-u'], options),
    runSvc(['exec', 'hello', '--', 'sh', '-c', 'echo out; echo err >&2; exit 5'], options),
    runSvc(['exec', 'nope', '--', 'id'], options),
    runSvc(['exec', 'idle', '--', 'id'], options),
  ]);
  const taskUid = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/^Uid:\s+(\d+)/m)![1]!;
  t.is(id.code, 0, id.stderr);
  t.is(id.stdout.trim(), taskUid);
  t.is(failed.code, 5);
  t.is(failed.stdout, 'out\n');
  t.is(failed.stderr, 'err\n');
  t.is(unknown.code, 4);
  t.regex(unknown.stderr, /app "nope"/);
  t.is(idle.code, 1);
  t.regex(idle.stderr, /no running allocation.*no release yet/);

  const piped = spawn(process.execPath, [SVC_BIN, 'exec', 'hello'], {
    env: { ...process.env, ...env, SVC_FROM_SOURCE, SVC_LOG_LEVEL: 'silent' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  piped.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  piped.stdin.end('echo "$GREETING"\nexit 9\n');
  const code = await new Promise((resolve) => piped.on('close', resolve));
  t.is(code, 9);
  t.is(out, 'hello-from-spec\n');
});

(hasTmux ? test : test.skip)(
  'svc exec in a terminal (tmux) opens an interactive shell: typed keys run, the window size follows, the exit code is kept',
  async (t) => {
    const { plane } = await startExecPlane(t);
    const session = `svc-exec-${process.pid}-${Date.now()}`;
    const log = path.join(tempDir(t), 'pane.log');
    fs.writeFileSync(log, '');
    const tmux = (...args: string[]) => {
      const result = spawnSync('tmux', args, { encoding: 'utf8' });
      if (result.status !== 0) throw new Error(`tmux ${args.join(' ')}: ${result.stderr}`);
      return result.stdout;
    };
    const command = [
      `SVC_API_URL=${plane.url}`,
      'SVC_API_TOKEN=',
      `SVC_FROM_SOURCE=${SVC_FROM_SOURCE}`,
      'SVC_LOG_LEVEL=silent',
      process.execPath,
      SVC_BIN,
      'exec',
      'hello',
      ';',
      'echo',
      'SVC-EXIT=$?',
      ';',
      'sleep',
      '600',
    ].join(' ');
    tmux('new-session', '-d', '-s', session, '-x', '100', '-y', '30', command);
    t.teardown(() => spawnSync('tmux', ['kill-session', '-t', session]));
    tmux('pipe-pane', '-t', session, '-o', `cat >> ${log}`);
    /** Resolves once the pane shows `pattern` (woken by each write of the pane's output to the log). */
    const screenShows = (pattern: RegExp) =>
      new Promise<string>((resolve, reject) => {
        const watcher = fs.watch(log);
        const timer = setTimeout(() => {
          watcher.close();
          reject(new Error(`the pane never showed ${pattern}:\n${tmux('capture-pane', '-p', '-t', session)}`));
        }, 20_000);
        const check = () => {
          const screen = tmux('capture-pane', '-p', '-J', '-t', session);
          if (!pattern.test(screen)) return;
          clearTimeout(timer);
          watcher.close();
          resolve(screen);
        };
        watcher.on('change', check);
        check();
      });
    tmux('send-keys', '-t', session, 'echo "tty=$(tty) size=$(stty size)"', 'Enter');
    const first = await screenShows(/tty=\/dev\/pts\/\d+ size=30 100/);
    t.regex(first, /tty=\/dev\/pts/);
    tmux('resize-window', '-t', session, '-x', '120', '-y', '40');
    tmux('send-keys', '-t', session, 'echo "now=$(stty size)"', 'Enter');
    await screenShows(/now=40 120/);
    tmux('send-keys', '-t', session, 'id -un; exit 4', 'Enter');
    const last = await screenShows(/SVC-EXIT=4/);
    if (process.getuid?.() === 0) t.regex(last, /svc-app-hello/);
  },
);
