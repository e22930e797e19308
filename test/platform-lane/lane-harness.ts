/**
 * Harness of the platform lane's end-to-end tests: a built tree of this repository (built once
 * per test file, `node_modules` shared by a link), variants of it with another version label, and
 * a platform started as real processes (`bin/svc.js serve --only control` from a built tree, the
 * host agent it starts), with an apps repository of trivial HTTP apps.
 */
import { execFileSync, spawn } from 'node:child_process';
import Database from 'better-sqlite3';
import { Agent, request as undiciRequest } from 'undici';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import { commitApp, initAppsRepo } from '../pipeline/pipeline-fixture.js';
import { stopAppsIn } from '../helpers/stop-apps.js';
import { CONTAINER_DOCKERFILE, assertBaseImages } from '../helpers/containers.js';
import { SVC_FROM_SOURCE } from '../helpers/cli.js';
import {
  freePort,
  readApiProcess,
  reapCandidates,
  releaseCommand,
  runningAgent,
  type ApiProcessRecord,
} from '../../platform/platform-lane/index.js';
import { isProcessAlive } from '../../platform/local-scheduler/tasks/process-table.js';
import { REPO_ROOT } from '../helpers/repo.js';

const REPO = REPO_ROOT;

let built: Promise<string> | undefined;

/**
 * A built checkout of this repository (dist/ from `tsc -p tsconfig.build.json`, bin/, package.json,
 * schemas/, node_modules linked), built once per test file; removed when the process exits. Under
 * `npm test`, which compiled dist/ from this checkout before the tests (SVC_FROM_SOURCE=0), the tree
 * copies that build instead of compiling again.
 */
export function builtTree(): Promise<string> {
  built ??= (async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-lane-tree-'));
    process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    if (SVC_FROM_SOURCE === '0') copyBuild(path.join(REPO, 'dist'), path.join(dir, 'dist'));
    else await compile(path.join(dir, 'dist'));
    fs.cpSync(path.join(REPO, 'bin'), path.join(dir, 'bin'), { recursive: true });
    fs.cpSync(path.join(REPO, 'schemas'), path.join(dir, 'schemas'), { recursive: true });
    fs.copyFileSync(path.join(REPO, 'package.json'), path.join(dir, 'package.json'));
    fs.symlinkSync(fs.realpathSync(path.join(REPO, 'node_modules')), path.join(dir, 'node_modules'));
    return dir;
  })();
  return built;
}

/** The program's part of the whole tree's build (what `tsconfig.build.json` emits, and the pages). */
function copyBuild(from: string, to: string): void {
  if (!fs.existsSync(path.join(from, 'cli', 'main.js'))) throw new Error(`${from} holds no build: run npm test`);
  const notTheProgram = new Set(['test', 'bench', 'scripts', 'fixtures']);
  fs.mkdirSync(to, { recursive: true });
  for (const entry of fs.readdirSync(from))
    if (!notTheProgram.has(entry)) fs.cpSync(path.join(from, entry), path.join(to, entry), { recursive: true });
}

function compile(outDir: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const tsc = spawn(
      process.execPath,
      [path.join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json', '--outDir', outDir],
      { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    tsc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    tsc.stderr.on('data', (d: Buffer) => (out += d.toString()));
    tsc.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`build failed: ${out}`))));
  });
}

/** A copy of `tree` whose package.json says `version` (another build identity and label); `binScript` replaces bin/svc.js. */
export function treeVariant(t: ExecutionContext, tree: string, version: string, binScript?: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-lane-variant-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  for (const name of ['dist', 'bin', 'schemas'])
    fs.cpSync(path.join(tree, name), path.join(dir, name), { recursive: true });
  const pkg = JSON.parse(fs.readFileSync(path.join(tree, 'package.json'), 'utf8')) as Record<string, unknown>;
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ ...pkg, version }, null, 2));
  fs.symlinkSync(fs.realpathSync(path.join(tree, 'node_modules')), path.join(dir, 'node_modules'));
  if (binScript !== undefined) fs.writeFileSync(path.join(dir, 'bin', 'svc.js'), binScript);
  return dir;
}

/** A bin/svc.js that runs the real program only as a candidate (SVC_OPERATION_WORKER=false) and exits 1 otherwise: passes preflight, fails postflight. */
export const FAILS_OUTSIDE_CANDIDATE = `#!/usr/bin/env node
if (process.env.SVC_OPERATION_WORKER !== 'false') { console.error('this release refuses to serve with workers on'); process.exit(1); }
const { main } = await import(new URL('../dist/cli/main.js', import.meta.url).href);
await main(process.argv);
`;

/**
 * A bin/svc.js that runs the real program as a candidate, and otherwise (once told to start, as the
 * real program waits when started prepared) migrates control.db one migration past this build (as a
 * newer release with a schema change would) and exits 1: it passes
 * preflight, changes the live database's schema, and fails postflight.
 */
export const MIGRATES_THEN_FAILS = `#!/usr/bin/env node
if (process.env.SVC_OPERATION_WORKER !== 'false') {
  const dist = (file) => new URL('../dist/' + file, import.meta.url).href;
  // Started prepared while the old API serves (ADR 0159), a release touches nothing before it is told to start.
  const { preparedStart } = await import(dist('platform/platform-lane/listener-handoff.js'));
  await preparedStart(process.env);
  const { openDatabase } = await import(dist('store/database.js'));
  const { migrate } = await import(dist('store/migrate.js'));
  const { CONTROL_MIGRATIONS } = await import(dist('store/control/migrations.js'));
  const db = openDatabase(process.env.SVC_DATA_DIR + '/control.db');
  migrate(db, [...CONTROL_MIGRATIONS, { version: CONTROL_MIGRATIONS.length + 1, name: 'lane-test-newer-schema', sql: 'CREATE TABLE lane_test_newer (x INTEGER)' }]);
  db.close();
  console.error('migrated control.db past the previous release, then failed');
  process.exit(1);
}
const { main } = await import(new URL('../dist/cli/main.js', import.meta.url).href);
await main(process.argv);
`;

/** A bin/svc.js that never serves: fails its candidate check. */
export const NEVER_STARTS = `#!/usr/bin/env node
console.error('broken release');
process.exit(1);
`;

/** A platform running as processes. */
export interface LanePlatform {
  readonly root: string;
  readonly dataDir: string;
  readonly appsDir: string;
  readonly platformDir: string;
  readonly url: string;
  readonly env: Record<string, string>;
  /** The API process as `svc serve` recorded it. */
  api(): ApiProcessRecord | undefined;
}

/**
 * The environment of a lane test platform: this process's own without any `SVC_` setting, `under`,
 * then the platform's folders and port, short timeouts, no managed PostgreSQL, and `extra` last.
 */
export function laneEnvironment(
  where: { port: number; root: string; dataDir: string; appsDir: string },
  extra: Record<string, string> = {},
  under: Record<string, string> = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('SVC_')) env[k] = v;
  return {
    ...env,
    ...under,
    SVC_PORT: String(where.port),
    SVC_DATA_DIR: where.dataDir,
    SVC_APPS_DIR: where.appsDir,
    SVC_SNAPSHOTS_DIR: path.join(where.root, 'snapshots'),
    SVC_LOG_LEVEL: 'info',
    SVC_POSTGRES_MANAGED: 'false',
    // The lane's apps are host processes unless a test asks for containers (startLanePlatform's `containers`).
    SVC_CONTAINER_RUNTIME: 'native',
    SVC_CAPACITY_CHECK_INTERVAL: 'off',
    SVC_EDGE_SYNC_INTERVAL: 'off',
    SVC_DEPLOY_HEALTHY_TIMEOUT: '20s',
    SVC_UPGRADE_BOOT_TIMEOUT: '40s',
    SVC_OPERATION_LEASE: '3s',
    ...extra,
  };
}

/** The newest migration recorded in the platform's control.db. */
export function newestControlMigration(platform: Pick<LanePlatform, 'dataDir'>): number {
  const db = new Database(path.join(platform.dataDir, 'control.db'), { readonly: true });
  try {
    return (db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number }).v;
  } finally {
    db.close();
  }
}

/** Waits until lane operation `id` ends, reading control.db (the API may be down meanwhile). */
export function waitForLaneRow(
  platform: LanePlatform,
  id: string,
): Promise<NonNullable<ReturnType<typeof readLaneRow>>> {
  return waitUntil(
    () => {
      const row = readLaneRow(platform, id);
      return row && ['succeeded', 'failed'].includes(row.status) ? row : undefined;
    },
    180_000,
    `the lane to end; agent log: ${tail(path.join(platform.platformDir, 'agent.log'), 2000)}`,
    100,
  );
}

/** Waits until the API answers `/api/version` for `release`; returns the answer. */
export function waitForApiRelease(
  platform: LanePlatform,
  release: string | undefined,
): Promise<{ release: string | undefined }> {
  return waitUntil(
    async () => {
      try {
        const v = await api(platform, 'GET', '/api/version');
        return v.status === 200 && v.body.release === release ? (v.body as { release: string | undefined }) : undefined;
      } catch {
        return undefined;
      }
    },
    60_000,
    `the API to serve release ${release}`,
    100,
  );
}

/**
 * Starts `<tree>/bin/svc.js serve --only control` (or, when `tree` is an unpacked release artifact,
 * `<tree>/svc serve --only control`) over a fresh data folder and apps repository holding `apps` (not deployed).
 */
export async function startLanePlatform(
  t: Pick<ExecutionContext, 'teardown'>,
  tree: string,
  options: {
    apps?: readonly string[];
    env?: Record<string, string>;
    appTest?: Record<string, string>;
    /** The apps are built FROM the offline Node base and run as podman containers (ADR 0219). */
    containers?: boolean;
  } = {},
): Promise<LanePlatform> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-lane-'));
  // Apps run as their own users (ADR 0047): they pass through the folders above their releases.
  fs.chmodSync(root, 0o711);
  const dataDir = path.join(root, 'data');
  const appsDir = path.join(root, 'apps');
  const platformDir = path.join(dataDir, 'platform');
  initAppsRepo({ appsDir } as never);
  if (options.containers) assertBaseImages();
  for (const app of options.apps ?? [])
    commitApp(
      appsDir,
      app,
      { version: app, ...(options.appTest?.[app] ? { test: options.appTest[app] } : {}) },
      options.containers ? { Dockerfile: CONTAINER_DOCKERFILE } : {},
    );
  const port = await freePort();
  const env = laneEnvironment(
    { port, root, dataDir, appsDir },
    {
      SVC_UPGRADE_BOOT_TIMEOUT: '40s',
      ...(options.containers
        ? { SVC_CONTAINER_RUNTIME: 'podman', SVC_REGISTRY_MIRROR: 'false', SVC_DEPLOY_HEALTHY_TIMEOUT: '60s' }
        : {}),
      ...options.env,
    },
  );
  fs.mkdirSync(platformDir, { recursive: true });
  const log = fs.openSync(path.join(root, 'first-api.log'), 'a');
  const [program, ...leading] = releaseCommand(tree);
  const child = spawn(program, [...leading, 'serve', '--only', 'control'], {
    cwd: root,
    env,
    stdio: ['ignore', log, log],
    detached: true,
  });
  fs.closeSync(log);
  child.unref();
  const platform: LanePlatform = {
    root,
    dataDir,
    appsDir,
    platformDir,
    url: `http://127.0.0.1:${port}`,
    env,
    api: () => readApiProcess(platformDir),
  };
  t.teardown(() => stopLanePlatform(platform));
  await waitUntil(
    () => platform.api()?.pid === child.pid,
    60_000,
    `the API (pid ${child.pid}) to record itself; log: ${tail(path.join(root, 'first-api.log'))}`,
  );
  return platform;
}

/** Pids whose command line names a path under `root`. */
function processesStartedUnder(root: string): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(`${root}/`)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** Stops the agent, the API and every app process, then removes the folder. */
export async function stopLanePlatform(platform: LanePlatform): Promise<void> {
  // Twice: an API being stopped may have launched an agent just before, and a killed agent leaves its
  // candidate APIs running (the next agent reaps them; here the test does, the same way).
  for (let round = 0; round < 2; round++) {
    const agent = runningAgent(platform.platformDir);
    if (agent !== undefined) await killAndWait(agent, undefined, 'SIGTERM');
    const api = platform.api();
    if (api && isProcessAlive(api.pid, api.startTime)) await killAndWait(api.pid, api.startTime, 'SIGTERM');
    reapCandidates(path.join(platform.platformDir, 'candidates'));
  }
  // An API the agent restarted from the release folder may not have recorded itself yet when the
  // test ends: stop every process started from this platform's folder.
  for (const pid of processesStartedUnder(platform.root)) await killAndWait(pid, undefined, 'SIGTERM');
  await stopAppsIn(platform.dataDir).catch(() => undefined);
  // A process of the lane may still be closing its log in the folder: rmSync retries ENOTEMPTY.
  fs.rmSync(platform.root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
}

/** Sends `signal` and waits until the process is gone (SIGKILL after 15 s). */
export async function killAndWait(pid: number, startTime: string | undefined, signal: NodeJS.Signals): Promise<void> {
  try {
    process.kill(pid, signal);
  } catch {
    return;
  }
  const deadline = Date.now() + 15_000;
  while (isProcessAlive(pid, startTime)) {
    if (Date.now() > deadline) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        return;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Polls `check` (another process's state: no event crosses processes) until it is truthy. */
export async function waitUntil<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs: number,
  what: string,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** JSON over HTTP; never throws for a status. */
export async function api<T = any>(
  platform: Pick<LanePlatform, 'url'>,
  method: 'GET' | 'POST',
  route: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const send = () =>
    fetch(`${platform.url}${route}`, {
      method,
      // A fresh connection per call: the API restarts during a lane, and a kept-alive connection the
      // server closed as idle while this process was busy fails the next request (UND_ERR_SOCKET), a
      // POST included, which cannot simply be sent again.
      headers: { connection: 'close', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  let response: Response;
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      response = await send();
      break;
    } catch (error) {
      // The API restarts during a lane (and a rolled-back release's restart may still be settling): a
      // refused connection never reached it, so it is sent again; a GET is also sent again after a reset.
      const code = (error as { cause?: { code?: string } }).cause?.code ?? '';
      const retry = code === 'ECONNREFUSED' || (method === 'GET' && /ECONNRESET|UND_ERR_SOCKET/.test(code));
      if (!retry || Date.now() > deadline)
        throw new Error(`${method} ${route}: fetch failed (${code || String(error)})`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/** Queues a deploy and waits until its operation is terminal (polling the API, which may restart meanwhile). */
export async function deployAndWait(platform: LanePlatform, app: string, timeoutMs = 60_000): Promise<any> {
  const queued = await api(platform, 'POST', `/api/apps/${app}/deploy`, {});
  if (queued.status !== 202) throw new Error(`deploy ${app}: ${queued.status} ${JSON.stringify(queued.body)}`);
  return waitForOperation(platform, queued.body.operation.id as string, timeoutMs);
}

/** Waits until operation `id` is terminal, tolerating an API restart. */
export function waitForOperation(platform: LanePlatform, id: string, timeoutMs = 120_000): Promise<any> {
  return waitUntil(
    async () => {
      try {
        const op = await api(platform, 'GET', `/api/v1/operations/${id}`);
        return ['succeeded', 'failed', 'cancelled'].includes(op.body?.status) ? op.body : undefined;
      } catch {
        return undefined;
      }
    },
    timeoutMs,
    `operation ${id} to end`,
    100,
  );
}

/** Waits until the app is deployed and registered; returns its instance addresses. */
export async function appAddresses(platform: LanePlatform, app: string): Promise<string[]> {
  return waitUntil(
    async () => {
      const manifest = await api(platform, 'GET', '/api/services/manifest');
      const service = (manifest.body.services as any[]).find(
        (s) => s.app === app && s.instances?.some((i: any) => i.status === 'passing'),
      );
      return service
        ? (service.instances as any[]).filter((i) => i.status === 'passing').map((i) => `http://${i.address}:${i.port}`)
        : undefined;
    },
    30_000,
    `${app} to be registered and passing`,
    100,
  );
}

/** Requests every address in a loop until stopped; counts answers that are not 200. */
export function requestLoop(addresses: readonly string[]): {
  stop(): Promise<{ ok: number; failed: number; errors: string[] }>;
} {
  let running = true;
  const counts = { ok: 0, failed: 0, errors: [] as string[] };
  // Its own connections: a keep-alive connection a previous loop left idle may be closed by the app's
  // server just as it is reused, which a client sees as a failure the upgrade did not cause.
  const agent = new Agent({ connections: 2 });
  const loop = (async () => {
    while (running) {
      for (const address of addresses) {
        try {
          const response = await undiciRequest(address, { dispatcher: agent, signal: AbortSignal.timeout(2000) });
          await response.body.text();
          if (response.statusCode === 200) counts.ok += 1;
          else {
            counts.failed += 1;
            counts.errors.push(`${address} ${response.statusCode}`);
          }
        } catch (error) {
          counts.failed += 1;
          const cause = (error as Error & { cause?: { code?: string; message?: string } }).cause;
          const code = (error as { code?: string }).code ?? cause?.code ?? cause?.message;
          counts.errors.push(`${address} ${(error as Error).message}${code ? ` (${code})` : ''}`);
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  let stopped: Promise<typeof counts> | undefined;
  return {
    // Called by the test and again by its teardown: the second call gets the first one's counts.
    stop() {
      running = false;
      stopped ??= loop.then(async () => {
        await agent.close();
        return counts;
      });
      return stopped;
    },
  };
}

/** The last lines of a file. */
export function tail(file: string, chars = 3000): string {
  try {
    return fs.readFileSync(file, 'utf8').slice(-chars);
  } catch {
    return '(none)';
  }
}

/** Queues a lane operation over HTTP; returns its id. */
export async function queueLane(
  platform: LanePlatform,
  kind: 'upgrade' | 'preflight' | 'smoke',
  body: Record<string, unknown>,
): Promise<string> {
  const queued = await api(platform, 'POST', `/api/platform/${kind}`, body);
  if (queued.status !== 202) throw new Error(`${kind}: ${queued.status} ${JSON.stringify(queued.body)}`);
  return queued.body.operation.id as string;
}

/** Waits until a lane operation ends; returns its view (operation, upgrade, steps). */
export function waitForLane(platform: LanePlatform, id: string, timeoutMs = 150_000): Promise<any> {
  return waitUntil(
    async () => {
      try {
        const view = await api(platform, 'GET', `/api/platform/operations/${id}`);
        return ['succeeded', 'failed', 'cancelled'].includes(view.body?.operation?.status) ? view.body : undefined;
      } catch {
        return undefined;
      }
    },
    timeoutMs,
    `lane operation ${id} to end; agent ${runningAgent(platform.platformDir) ?? 'not running'}; agent log: ${tail(path.join(platform.platformDir, 'agent.log'), 1500)}; api log: ${tail(path.join(platform.platformDir, 'api.log'), 1500)}`,
    150,
  );
}

/** The `current` link's release id. */
export function currentRelease(platform: LanePlatform): string | undefined {
  try {
    return path.basename(fs.readlinkSync(path.join(platform.platformDir, 'current')));
  } catch {
    return undefined;
  }
}

/** Runs git in `cwd`. */
export function gitIn(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
}

/** Reads a lane operation straight from control.db (the API may be down in the middle of a restart). */
export function readLaneRow(
  platform: LanePlatform,
  id: string,
):
  | {
      status: string;
      stage: string | null;
      attempts: number;
      lastError: string | null;
      phase: string | null;
      fromRelease: string | null;
    }
  | undefined {
  const db = new Database(path.join(platform.dataDir, 'control.db'), { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    return db
      .prepare(
        'SELECT o.status, o.stage, o.attempts, o.last_error AS lastError, u.phase, u.from_release AS fromRelease FROM operations o LEFT JOIN platform_upgrades u ON u.operation_id = o.id WHERE o.id = ?',
      )
      .get(id) as
      | {
          status: string;
          stage: string | null;
          attempts: number;
          lastError: string | null;
          phase: string | null;
          fromRelease: string | null;
        }
      | undefined;
  } finally {
    db.close();
  }
}

/** Starts `svc agent` from `tree` detached, as `svc serve` would. */
export function startAgent(platform: LanePlatform, tree: string): number {
  const log = fs.openSync(path.join(platform.platformDir, 'agent.log'), 'a');
  const child = spawn(process.execPath, [path.join(tree, 'bin', 'svc.js'), 'agent', '--data', platform.dataDir], {
    cwd: platform.root,
    env: platform.env,
    detached: true,
    stdio: ['ignore', log, log],
  });
  fs.closeSync(log);
  child.unref();
  return child.pid!;
}
