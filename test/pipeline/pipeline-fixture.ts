/**
 * Fixtures of the deploy pipeline tests: an apps repository (a real git checkout) with trivial
 * HTTP apps built from their own folder, and a control plane serving it.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import { closePlaneAndStopApps } from '../helpers/stop-apps.js';
import type { ControlPlane } from '../../wiring/control-plane.js';
import { silentLogger } from '../../platform/logger.js';
import type { SvcConfig } from '../../platform/config.js';
import { request } from '../helpers/servers.js';
import { testConfig } from '../helpers/test-config.js';
import { getApp } from '../../store/control/apps.js';

/** A server answering `<version> <pid>` and /healthz with `healthStatus`; the code is part of the release. */
export function server(version: string, healthStatus: number): string {
  return `import http from 'node:http';
const server = http.createServer((req, res) => {
  if (req.url === '/healthz') { res.writeHead(${healthStatus}); res.end('health'); return; }
  res.writeHead(200, { 'content-type': 'text/plain' }); res.end('${version} ' + process.pid);
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;
}

export const DOCKERFILE = 'FROM node:20-alpine\nWORKDIR /app\nCOPY . .\nCMD ["node", "server.mjs"]\n';

/** Runs git in `cwd`. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.test', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();
}

/** Options of one fixture app. */
export interface AppOptions {
  readonly version?: string;
  readonly healthStatus?: number;
  readonly test?: string;
  readonly canary?: { count: number; evaluateAfter: string };
  readonly count?: number;
  readonly extra?: string;
  readonly port?: boolean;
  /** The process port (static when the app declares endpoints). @default 8080 */
  readonly portNumber?: number;
  /** The health check's interval. @default 100ms */
  readonly healthInterval?: string;
}

/** The infraspec.yaml of a fixture app. */
export function appSpec(name: string, options: AppOptions = {}): string {
  const lines = [`name: ${name}`, 'deploy: true'];
  if (options.test) lines.push('build:', `  test: ${JSON.stringify(options.test)}`);
  lines.push('processes:', '  web:');
  if (options.port !== false) {
    lines.push(
      `    port: ${options.portNumber ?? 8080}`,
      '    health:',
      '      path: /healthz',
      `      interval: ${options.healthInterval ?? '100ms'}`,
      '      timeout: 1s',
    );
  } else {
    lines.push('    command: node server.mjs');
  }
  lines.push('    resources:', '      memory: 128');
  if (options.count !== undefined) lines.push('    scaling:', `      min: ${options.count}`);
  if (options.canary)
    lines.push(
      '    canary:',
      `      count: ${options.canary.count}`,
      `      evaluateAfter: ${options.canary.evaluateAfter}`,
    );
  if (options.extra) lines.push(options.extra);
  return `${lines.join('\n')}\n`;
}

/** Writes (and commits) one app folder into the apps repository; returns the commit. */
export function commitApp(
  appsDir: string,
  name: string,
  options: AppOptions = {},
  files: Record<string, string> = {},
): string {
  const dir = path.join(appsDir, name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'infraspec.yaml'), appSpec(name, options));
  fs.writeFileSync(path.join(dir, 'Dockerfile'), DOCKERFILE);
  fs.writeFileSync(path.join(dir, 'server.mjs'), server(options.version ?? 'v1', options.healthStatus ?? 200));
  for (const [file, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, file), text);
  git(appsDir, 'add', '-A');
  git(appsDir, 'commit', '-q', '--allow-empty', '-m', `${name} ${options.version ?? 'v1'}`);
  return git(appsDir, 'rev-parse', 'HEAD');
}

/** Initializes an apps repository in `config.appsDir`. */
export function initAppsRepo(config: SvcConfig): void {
  fs.mkdirSync(config.appsDir, { recursive: true });
  git(config.appsDir, 'init', '-q', '-b', 'main');
}

/** A test config with short health deadlines. */
export function pipelineConfig(t: ExecutionContext, env: Record<string, string> = {}): SvcConfig {
  return testConfig(t, {
    SVC_DEPLOY_HEALTHY_TIMEOUT: '6s',
    SVC_OPERATION_WORKERS: '4',
    SVC_WEBHOOK_SECRET: 'test-webhook-secret',
    ...env,
  });
}

/** Starts a control plane; teardown stops the plane, then every app process it left running. */
export async function startPlane(t: ExecutionContext, config: SvcConfig): Promise<ControlPlane> {
  // Imported when a plane starts: some files take only the git helpers from here (ADR 0170).
  const { startControlPlane } = await import('../../wiring/control-plane.js');
  const plane = await startControlPlane(config, silentLogger());
  t.teardown(() => closePlaneAndStopApps(plane, config));
  return plane;
}

/** Waits until the spec controller knows `app` with a valid spec. */
export async function waitForApp(plane: ControlPlane, app: string): Promise<void> {
  for (let i = 0; i < 400; i += 1) {
    const row = getApp(plane.db, app);
    if (row?.spec) return;
    await new Promise<void>((resolve) => {
      const unsubscribe = plane.reconcilers.specController.onReconciled(() => (unsubscribe(), resolve()));
    });
  }
  throw new Error(`app ${app} was not discovered`);
}

/** Queues a deploy over HTTP and waits for its operation to end; returns the final deployment with steps. */
export async function deployAndWait(
  plane: ControlPlane,
  app: string,
  body: Record<string, unknown> = {},
  action = 'deploy',
  timeoutMs = 30_000,
): Promise<{ queued: any; operation: any; steps: any }> {
  const queued = await request(`${plane.url}/api/apps/${app}/${action}`, { method: 'POST', json: body });
  if (queued.status !== 202) throw new Error(`${action} answered ${queued.status}: ${queued.text}`);
  const operation = await plane.deploys.worker.waitFor(queued.body.operation.id, timeoutMs);
  const steps = (await request(`${plane.url}/api/v1/deployments/${queued.body.deploymentId}/steps`)).body;
  return { queued: queued.body, operation, steps };
}

/** `step status` pairs of a steps answer. */
export function stepSummary(steps: { steps: { step: string; status: string }[] }): string[] {
  return steps.steps.map((s) => `${s.step} ${s.status}`);
}

/** The events recorded for `app` (through the event services' API). */
export async function appEvents(
  plane: ControlPlane,
  app: string,
): Promise<{ type: string; severity: string; metadata: Record<string, unknown> }[]> {
  const response = await request(`${plane.url}/api/events?app=${app}&limit=200`);
  const body = response.body;
  return Array.isArray(body) ? body : (body.events ?? body.items ?? []);
}

/** The text a web allocation of `app` serves. */
export async function served(plane: ControlPlane, app: string): Promise<string[]> {
  const view = (await request(`${plane.url}/api/apps/${app}`)).body;
  const web = view.processes.find((p: { process: string }) => p.process === 'web');
  const out: string[] = [];
  for (const allocation of web?.allocations ?? []) {
    // A replaced allocation drains after its replacement passes (start before stop): not served.
    if (allocation.status !== 'running' || allocation.desiredStatus !== 'run' || allocation.ports.http === undefined)
      continue;
    // An allocation being replaced can still read `running` while its process exits: a refused
    // connection is not an answer; the caller's expected set still fails when nothing answers.
    const answer = await fetch(`http://127.0.0.1:${allocation.ports.http}/`).then(
      (r) => r.text(),
      () => undefined,
    );
    if (answer !== undefined) out.push(answer.split(' ')[0]!);
  }
  return out.sort();
}
