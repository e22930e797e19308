/**
 * Fixtures for local-driver tests: tiny dependency-free programs written into a test's temp dir,
 * job builders, and a driver opened on a temp data dir that stops its jobs on teardown.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import { milliseconds, type JobSpec, type TaskGroupSpec } from '../../../domain/scheduler/index.js';
import { LocalRegistry } from '../../../platform/local-registry/index.js';
import { LocalScheduler, type LocalSchedulerOptions } from '../../../platform/local-scheduler/index.js';
import { tempDir } from '../../helpers/temp-dir.js';

/** An HTTP server answering 200 on /healthz, its env on /env, and exiting 0 on SIGTERM. */
export const SERVER_JS = `
import http from 'node:http';
const server = http.createServer((req, res) => {
  if (req.url === '/healthz') { res.end('ok'); return; }
  if (req.url === '/cwd') { res.end(process.cwd()); return; }
  if (req.url === '/env') { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify(process.env)); return; }
  res.statusCode = 404; res.end('not found');
});
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

/** Grows its heap outside V8 in 8 MB steps up to 200 MB, then holds it. */
export const HOG_JS = `
const chunks = [];
const timer = setInterval(() => {
  if (chunks.length >= 25) return;
  chunks.push(Buffer.alloc(8 * 1024 * 1024, 1));
}, 15);
process.on('SIGTERM', () => { clearInterval(timer); process.exit(0); });
`;

/**
 * Records the drain signal it receives in drained.txt and ignores it, so only SIGKILL ends it; both
 * files are in its task folder (`SVC_TASK_DIR`, the one folder of the allocation it owns).
 */
export const STUBBORN_JS = `
import fs from 'node:fs';
process.chdir(process.env.SVC_TASK_DIR);
process.on('SIGUSR1', () => fs.appendFileSync('drained.txt', 'SIGUSR1\\n'));
process.on('SIGTERM', () => fs.appendFileSync('drained.txt', 'SIGTERM\\n'));
fs.writeFileSync('ready.txt', String(process.pid));
setInterval(() => {}, 1000);
`;

/** A driver, its registry and the app dir of one test. */
export interface DriverFixture {
  readonly driver: LocalScheduler;
  readonly registry: LocalRegistry;
  readonly dataDir: string;
  readonly appDir: string;
}

/** Opens a driver on a fresh data dir; teardown stops (purges) every job, then closes it. */
export async function openDriver(t: ExecutionContext, files: Record<string, string> = {}): Promise<DriverFixture> {
  const root = tempDir(t, 'svc-local-scheduler-');
  const dataDir = path.join(root, 'data');
  const appDir = path.join(root, 'app');
  fs.mkdirSync(appDir, { recursive: true });
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(appDir, name), text);
  const { driver, registry } = await reopenDriver(t, dataDir);
  return { driver, registry, dataDir, appDir };
}

/**
 * Opens a driver (with its own registry) on an existing data dir, as a restarted platform does, with
 * `options` added; teardown stops (purges) every job, then closes it.
 */
export async function reopenDriver(
  t: ExecutionContext,
  dataDir: string,
  options: Partial<LocalSchedulerOptions> = {},
): Promise<{ driver: LocalScheduler; registry: LocalRegistry }> {
  const registry = new LocalRegistry();
  const driver = await LocalScheduler.open({
    dataDir,
    registry,
    monitorInterval: milliseconds(40),
    defaultRestart: fastRestart,
    ...options,
  });
  t.teardown(() => stopEverything(driver));
  return { driver, registry };
}

/** Stops and purges every job of a driver, then closes it. */
export async function stopEverything(driver: LocalScheduler): Promise<void> {
  try {
    for (const job of await driver.listJobs()) await driver.stopJob(job.spec.id, { purge: true });
  } catch {
    // Already closed.
  }
  await driver.close();
}

/** A restart policy quick enough for tests. */
export const fastRestart = {
  initialDelay: milliseconds(50),
  maxDelay: milliseconds(400),
  resetAfter: milliseconds(5000),
};

/** Options of {@link serviceGroup}. */
export interface GroupOptions {
  readonly name?: string;
  readonly command: string | readonly string[];
  readonly workdir: string;
  readonly count?: number;
  readonly memoryMb?: number;
  readonly env?: Record<string, string>;
  readonly check?: boolean;
  readonly drainSignal?: NodeJS.Signals;
  readonly drainMs?: number;
  readonly canary?: number;
  readonly serviceName?: string;
  readonly staticPort?: number;
  readonly files?: TaskGroupSpec['task']['files'];
  readonly timeoutMs?: number;
}

/** A task group with an `http` port, a registry service and a 100ms health check. */
export function serviceGroup(options: GroupOptions): TaskGroupSpec {
  const name = options.name ?? 'web';
  return {
    name,
    count: options.count ?? 1,
    task: {
      name,
      command: options.command,
      workdir: options.workdir,
      env: options.env ?? {},
      resources: { cpuMhz: 100, memoryMb: options.memoryMb ?? 256 },
      ...(options.files ? { files: options.files } : {}),
      ...(options.timeoutMs !== undefined ? { timeout: milliseconds(options.timeoutMs) } : {}),
    },
    ports: [{ label: 'http', ...(options.staticPort !== undefined ? { static: options.staticPort } : {}) }],
    services: [
      {
        name: options.serviceName ?? `demo-${name}`,
        portLabel: 'http',
        ...(options.check === false
          ? {}
          : { check: { path: '/healthz', interval: milliseconds(100), timeout: milliseconds(1000) } }),
      },
    ],
    drain: { signal: options.drainSignal ?? 'SIGTERM', timeout: milliseconds(options.drainMs ?? 2000) },
    ...(options.canary !== undefined ? { canary: options.canary } : {}),
  };
}

/** A service job of one or more groups. */
export function serviceJob(id: string, ...groups: TaskGroupSpec[]): JobSpec {
  return { id, app: 'demo', type: 'service', taskGroups: groups };
}
