// tier: quick
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { LogService } from '../../../controllers/logs/log-service.js';
import type { LogLine } from '../../../domain/logs/index.js';
import { LocalRegistry } from '../../../platform/local-registry/index.js';
import { LocalScheduler } from '../../../platform/local-scheduler/index.js';
import { silentLogger } from '../../../platform/logger.js';
import { LogStore } from '../../../store/logs/log-store.js';
import { LogCapture } from '../../../platform/local-scheduler/allocations/log-capture.js';
import { milliseconds } from '../../../domain/scheduler/index.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { fastRestart, serviceGroup, serviceJob, stopEverything } from './fixtures.js';
import fs from 'node:fs';

const node = process.execPath;

/** Prints a numbered line on stdout every 20ms and one on stderr every 5th; exits 3 after `LAST` lines when set. */
const CHATTY_JS = `
let n = 0;
const last = Number(process.env.LAST ?? 0);
const timer = setInterval(() => {
  n += 1;
  console.log('line ' + n + ' from ' + process.pid);
  if (n % 5 === 0) console.error('warn ' + n);
  if (last && n >= last) { clearInterval(timer); process.stdout.write('unfinished last words'); process.exit(3); }
}, 20);
process.on('SIGTERM', () => process.exit(0));
`;

async function setup(t: ExecutionContext) {
  const root = tempDir(t, 'svc-log-capture-');
  const dataDir = path.join(root, 'data');
  const appDir = path.join(root, 'app');
  fs.mkdirSync(appDir, { recursive: true });
  fs.writeFileSync(path.join(appDir, 'chatty.mjs'), CHATTY_JS);
  const store = new LogStore({ file: path.join(root, 'logs.db'), maxBytesPerApp: 64 << 20, maxAgeMs: 86_400_000 });
  const logs = new LogService({ store, appExists: () => true, logger: silentLogger() });
  const open = () =>
    LocalScheduler.open({
      dataDir,
      registry: new LocalRegistry(),
      monitorInterval: milliseconds(40),
      defaultRestart: fastRestart,
      logs,
    });
  const driver = await open();
  t.teardown(() => {
    logs.close();
    store.close();
  });
  return { driver, store, logs, appDir, open };
}

/** Resolves once `predicate` holds for the lines a follower has seen (event driven). */
function collect(logs: LogService, app: string, predicate: (lines: readonly LogLine[]) => boolean): Promise<LogLine[]> {
  return new Promise((resolve, reject) => {
    const seen: LogLine[] = [];
    const timer = setTimeout(
      () => reject(new Error(`timed out; saw ${seen.length} lines: ${JSON.stringify(seen.map((l) => l.line))}`)),
      15_000,
    );
    const stop = logs.follow({ app }, 10_000, (lines) => {
      seen.push(...lines);
      if (predicate(seen)) {
        clearTimeout(timer);
        queueMicrotask(() => stop());
        resolve(seen);
      }
    });
  });
}

test('log capture stores each stdout and stderr line of a service with its app, process, allocation, release and stream', async (t) => {
  const { driver, logs, store, appDir } = await setup(t);
  t.teardown(() => stopEverything(driver));
  await driver.submitJob({
    ...serviceJob('demo-web', serviceGroup({ command: `${node} chatty.mjs`, workdir: appDir, check: false })),
    meta: { 'svc.process': 'web', 'svc.commit': '0123456789abcdef0123' },
  });
  const lines = await collect(logs, 'demo', (seen) => seen.filter((l) => l.stream === 'stderr').length >= 2);
  const [alloc] = await driver.listAllocations({ jobId: 'demo-web' });
  const first = lines.find((l) => l.stream === 'stdout')!;
  t.regex(first.line, /^line 1 from \d+$/);
  t.like(first, { app: 'demo', process: 'web', allocation: alloc!.id, release: '0123456789ab' });
  t.regex(lines.find((l) => l.stream === 'stderr')!.line, /^warn 5$/);
  const stdoutNumbers = lines.filter((l) => l.stream === 'stdout').map((l) => Number(l.line.split(' ')[1]));
  t.deepEqual(
    stdoutNumbers,
    stdoutNumbers.map((_, i) => i + 1),
    'every line once, in order',
  );
  t.true(store.query({ app: 'demo', stream: 'stderr', limit: 10 }).every((l) => l.line.startsWith('warn')));
});

test('the last lines of a crashed allocation, unfinished last line included, stay readable after it is gone', async (t) => {
  const { driver, logs, appDir } = await setup(t);
  t.teardown(() => stopEverything(driver));
  await driver.submitJob(
    serviceJob(
      'demo-web',
      serviceGroup({ command: `${node} chatty.mjs`, workdir: appDir, check: false, env: { LAST: '6' } }),
    ),
  );
  const lines = await collect(logs, 'demo', (seen) => seen.some((l) => l.line === 'unfinished last words'));
  const crashed = lines.find((l) => l.line === 'unfinished last words')!.allocation;
  t.true(lines.some((l) => l.allocation === crashed && l.line.startsWith('line 6 ')));
  await driver.stopJob('demo-web', { purge: true });
  t.is((await driver.listAllocations({ includeTerminal: true })).length, 0, 'the allocation is gone');
  const kept = logs.read({ app: 'demo', allocation: crashed, stream: 'stdout', limit: 1000 });
  // The driver restarted the task in the same allocation before the purge: its first run comes first.
  t.deepEqual(
    kept.slice(0, 7).map((l) => l.line.split(' from ')[0]),
    ['line 1', 'line 2', 'line 3', 'line 4', 'line 5', 'line 6', 'unfinished last words'],
  );
});

test('a driver restart neither loses nor repeats lines of a process that kept running', async (t) => {
  const { driver, logs, appDir, open } = await setup(t);
  await driver.submitJob(
    serviceJob('demo-web', serviceGroup({ command: `${node} chatty.mjs`, workdir: appDir, check: false })),
  );
  await collect(logs, 'demo', (seen) => seen.length >= 5);
  await driver.close(); // the process goes on printing
  const next = await open();
  t.teardown(() => stopEverything(next));
  const before = logs.read({ app: 'demo', stream: 'stdout', limit: 10_000 }).length;
  const lines = await collect(logs, 'demo', (seen) => seen.filter((l) => l.stream === 'stdout').length >= before + 10);
  const numbers = lines.filter((l) => l.stream === 'stdout').map((l) => Number(l.line.split(' ')[1]));
  t.deepEqual(
    numbers,
    numbers.map((_, i) => i + 1),
  );
});

test("two exits read in one go each end their own unfinished line: a quick crash loop never joins one run's last words to the next run's first line", async (t) => {
  const root = tempDir(t, 'svc-log-cuts-');
  const store = new LogStore({ file: path.join(root, 'logs.db'), maxBytesPerApp: 1 << 20, maxAgeMs: 86_400_000 });
  const logs = new LogService({ store, appExists: () => true, logger: silentLogger() });
  const capture = new LogCapture({ sink: logs, logger: silentLogger() });
  t.teardown(() => {
    capture.close();
    logs.close();
    store.close();
  });
  const files = { stdout: path.join(root, 'stdout'), stderr: path.join(root, 'stderr') };
  fs.writeFileSync(files.stdout, '');
  fs.writeFileSync(files.stderr, '');
  capture.follow({ allocation: 'a1', app: 'demo', process: 'web', release: 'r', files });
  // Both runs write and exit before the capture reads a byte (its reads are asynchronous).
  fs.appendFileSync(files.stdout, 'line 1\nfirst run dies');
  capture.touch('a1', true);
  fs.appendFileSync(files.stdout, 'line 1\nsecond run dies');
  capture.touch('a1', true);
  await capture.drain();
  t.deepEqual(
    logs.read({ app: 'demo', allocation: 'a1', stream: 'stdout', limit: 10 }).map((l) => l.line),
    ['line 1', 'first run dies', 'line 1', 'second run dies'],
  );
});
