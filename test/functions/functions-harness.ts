/**
 * A control plane with function apps for the function tests: a git repo with a small function
 * program, a release per app built by the release builder, specs committed to the apps folder.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startControlPlane, type ControlPlane } from '../../wiring/control-plane.js';
import type { Scheduler } from '../../domain/scheduler/index.js';
import { loadConfig, type SvcConfig } from '../../platform/config.js';
import { silentLogger } from '../../platform/logger.js';
import { ReleaseBuilder } from '../../platform/release-builder/index.js';
import { getApp, setAppRelease } from '../../store/control/apps.js';
import { request } from '../helpers/servers.js';
import { closePlaneAndStopApps } from '../helpers/stop-apps.js';
import { waitForChange, waitForReconciled } from '../helpers/wait-for.js';

/**
 * The function: `{fail: true}` writes to stderr and exits 1, `{hang: true}` never ends,
 * `{sleepMs: n}` prints `slept` after n ms, anything
 * else prints the request variables (a body over 4 KiB cut to 10 characters, with its size) and the
 * app's GREETING as JSON.
 */
export const FUNCTION_PROGRAM = `const raw = process.env.SVC_REQUEST_BODY ?? '';
const input = raw === '' ? undefined : JSON.parse(raw);
if (input && input.fail) { console.error('boom: asked to fail'); process.exit(1); }
if (input && input.hang) { setInterval(() => {}, 1000); }
else if (input && input.sleepMs) { setTimeout(() => console.log('slept'), input.sleepMs); }
else console.log(JSON.stringify({ body: raw.length > 4096 ? raw.slice(0, 10) : raw, bytes: Buffer.byteLength(raw), method: process.env.SVC_REQUEST_METHOD, path: process.env.SVC_REQUEST_PATH, greeting: process.env.GREETING, job: process.env.SVC_JOB_ID }));
`;

/** Specs: `fns` (two functions and a periodic process), `solo` (one function), `idle` (never deployed), `plain` (no function). */
export const SPECS: Readonly<Record<string, string>> = {
  fns: `name: fns
deploy: true
env:
  GREETING: hello from fns
processes:
  echo:
    function: {}
  slow:
    function:
      timeout: 1s
  nightly:
    schedule: "0 3 * * *"
`,
  solo: `name: solo
deploy: true
env:
  GREETING: hello from solo
processes:
  handler:
    function:
      timeout: 20s
`,
  idle: `name: idle
processes:
  job:
    function: {}
`,
  plain: `name: plain
processes:
  worker: {}
`,
};

/** The deployed apps. */
export const DEPLOYED = ['fns', 'solo'] as const;

/** Runs git in `cwd` with a throwaway identity. */
export function git(cwd: string, ...args: string[]): void {
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.test', ...args], { cwd, stdio: 'ignore' });
}

/** A running control plane with every function job of the deployed apps submitted. */
export interface FunctionPlane {
  /** The running plane; replaced by {@link FunctionPlane.restart}. */
  plane: ControlPlane;
  readonly config: SvcConfig;
  /** The local scheduler of the running plane. */
  scheduler: Scheduler;
  /** Closes the plane (app processes keep running) and starts a new one on the same folders. */
  restart(): Promise<void>;
  /** Closes the plane, stops the app processes and removes the folders. */
  close(): Promise<void>;
}

/**
 * Starts the plane with {@link SPECS} committed and {@link DEPLOYED} released. Shared by the tests
 * of a file (ava allows no `t.teardown` in hooks), so the caller closes it in `test.after.always`.
 */
export async function startFunctionPlane(): Promise<FunctionPlane> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-test-functions-'));
  // Apps run as their own users below it (ADR 0047): they must be able to enter it.
  fs.chmodSync(root, 0o711);
  const code = path.join(root, 'code');
  fs.mkdirSync(code, { recursive: true });
  fs.writeFileSync(path.join(code, 'fn.mjs'), FUNCTION_PROGRAM);
  fs.writeFileSync(
    path.join(code, 'Dockerfile'),
    'FROM node:20-alpine\nWORKDIR /app\nCOPY . .\nCMD ["node", "fn.mjs"]\n',
  );
  git(code, 'init', '-q', '-b', 'main');
  git(code, 'add', '-A');
  git(code, 'commit', '-q', '-m', 'function');
  const config = loadConfig({
    SVC_PORT: '0',
    SVC_POSTGRES_MANAGED: 'false',
    SVC_KNOWLEDGE_PORT: '0',
    SVC_KNOWLEDGE_ADMIN_PORT: '0',
    SVC_DATA_DIR: `${root}/data`,
    SVC_APPS_DIR: `${root}/apps`,
    SVC_LOG_LEVEL: 'silent',
  });
  fs.mkdirSync(config.appsDir, { recursive: true });
  git(config.appsDir, 'init', '-q', '-b', 'main');
  for (const [name, spec] of Object.entries(SPECS)) {
    fs.mkdirSync(path.join(config.appsDir, name));
    fs.writeFileSync(path.join(config.appsDir, name, 'infraspec.yaml'), spec);
  }
  git(config.appsDir, 'add', '-A');
  git(config.appsDir, 'commit', '-q', '-m', 'apps');
  const plane = await startControlPlane(config, silentLogger());
  const env: FunctionPlane = {
    plane,
    config,
    scheduler: await plane.reconcilers.targets.get(),
    async restart() {
      await env.plane.close();
      env.plane = await startControlPlane(config, silentLogger());
      env.scheduler = await env.plane.reconcilers.targets.get();
    },
    async close() {
      await closePlaneAndStopApps(env.plane, config);
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
  try {
    const controllers = [plane.reconcilers.specController, plane.reconcilers.appController];
    const builder = new ReleaseBuilder({ dataDir: config.dataDir, logger: silentLogger() });
    for (const app of DEPLOYED) {
      const release = await builder.build({ app, repoUrl: code, ref: 'main' });
      await waitForReconciled(controllers, () => getApp(plane.db, app)?.spec != null, { what: `spec of ${app} read` });
      setAppRelease(plane.db, app, { commit: release.manifest.commit, dir: release.dir });
      plane.reconcilers.appController.enqueue(app);
    }
    await waitForReconciled(
      [plane.reconcilers.specController],
      () => Object.keys(SPECS).every((app) => getApp(plane.db, app)?.spec != null),
      { what: 'every spec read' },
    );
    for (const job of ['fns-echo', 'fns-slow', 'solo-handler']) {
      await waitForReconciled(controllers, async () => (await env.scheduler.getJob(job))?.status === 'running', {
        what: `job ${job}`,
      });
    }
    return env;
  } catch (error) {
    await env.close();
    throw error;
  }
}

/** One history record as the API answers it. */
export interface ExecutionView {
  executionId: string;
  jobId: string;
  app: string;
  process: string;
  region: string;
  allocationId: string | null;
  status: string;
  exitCode: number | null;
  output: string;
  errorOutput: string;
  outputTruncated: boolean;
  durationMs: number | null;
  startedAt: string;
  finishedAt: string | null;
}

/** Waits, on the scheduler's allocation changes, until the execution's history record is no longer running. */
export async function waitForExecution(env: FunctionPlane, app: string, executionId: string): Promise<ExecutionView> {
  return waitForChange(
    [(listener) => env.scheduler.watch(() => listener())],
    async () => {
      const history = await request(`${env.plane.url}/api/apps/${app}/function/history?execution=${executionId}`);
      const record = (history.body.executions as ExecutionView[])[0];
      return record !== undefined && record.status !== 'running' ? record : undefined;
    },
    { what: `execution ${executionId} finished` },
  );
}
