/**
 * The fixture of `bench/containers.ts`: one plane per runtime on its own apps repository holding
 * hello-web and hello-cold (hello-web at scale zero, reporting when node started and listened), and
 * the deploys, code-only commits and requests the phases make.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ControlPlane } from '../../wiring/control-plane.js';
import { loadConfig, type SvcConfig } from '../../platform/config.js';
import { readReleaseManifest } from '../../platform/release-builder/index.js';
import { getApp } from '../../store/control/apps.js';
import { git } from '../../test/pipeline/pipeline-fixture.js';

export type Runtime = 'native' | 'container';

export interface Side {
  readonly runtime: Runtime;
  readonly config: SvcConfig;
  plane?: ControlPlane;
}

/** hello-cold: hello-web at scale zero on its own hostname, reporting when node started and listened. */
export function writeColdApp(sample: string, appsDir: string): void {
  const dir = path.join(appsDir, 'hello-cold');
  fs.cpSync(sample, dir, { recursive: true });
  const edit = (file: string, pairs: readonly [string, string][]) => {
    let text = fs.readFileSync(path.join(dir, file), 'utf8');
    for (const [from, to] of pairs) {
      if (!text.includes(from))
        throw new Error(`fixtures/apps/hello-web/${file} no longer holds ${JSON.stringify(from)}`);
      text = text.replace(from, to);
    }
    fs.writeFileSync(path.join(dir, file), text);
  };
  edit('infraspec.yaml', [
    ['name: hello-web', 'name: hello-cold'],
    ['hello.example.test', 'cold.example.test'],
    ['    resources:\n', '    scaling:\n      min: 0\n    resources:\n'],
  ]);
  // Epoch ms (sub-ms) of node's start (performance.timeOrigin) and of listening, in the answer to `/`.
  edit('server.mjs', [
    ['let draining = false;', 'let draining = false;\nlet readyAt = 0;'],
    ['pid: process.pid })', 'pid: process.pid, startedAt: performance.timeOrigin, readyAt })'],
    [
      'server.listen(port, () => {',
      'server.listen(port, () => {\n  readyAt = performance.timeOrigin + performance.now();',
    ],
  ]);
}

export function sideConfig(
  root: string,
  sample: string,
  runtime: Runtime,
  name: string = runtime,
  env: Record<string, string> = {},
): SvcConfig {
  const dir = path.join(root, name);
  const appsDir = path.join(dir, 'apps');
  fs.mkdirSync(appsDir, { recursive: true });
  git(appsDir, 'init', '-q', '-b', 'main');
  fs.cpSync(sample, path.join(appsDir, 'hello-web'), { recursive: true });
  writeColdApp(sample, appsDir);
  git(appsDir, 'add', '-A');
  git(appsDir, 'commit', '-q', '-m', 'sample apps');
  return loadConfig({
    SVC_PORT: '0',
    SVC_POSTGRES_MANAGED: 'false',
    SVC_KNOWLEDGE_PORT: '0',
    SVC_KNOWLEDGE_ADMIN_PORT: '0',
    SVC_DATA_DIR: path.join(dir, 'data'),
    SVC_APPS_DIR: appsDir,
    SVC_LOG_LEVEL: 'silent',
    SVC_CONTAINER_RUNTIME: runtime === 'container' ? 'podman' : 'native',
    // Scale-to-zero happens when the bench sweeps, never on its own during the other phases.
    SVC_WAKE_IDLE_TIMEOUT: '1h',
    ...env,
  });
}

/** A code-only commit: the first line of hello-web's server.mjs (a comment) changes. */
export function codeChange(side: Side, label: string): void {
  const file = path.join(side.config.appsDir, 'hello-web', 'server.mjs');
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  lines[0] = `// hello-web (${label}): answers greetings, a health check and Prometheus metrics; drains on SIGTERM.`;
  fs.writeFileSync(file, lines.join('\n'));
  git(side.config.appsDir, 'commit', '-qam', `hello-web ${label}`);
}

export interface Step {
  readonly step: string;
  readonly status: string;
  readonly startedAt: string;
  readonly endedAt: string | null;
}

export interface Deployed {
  /** Queue to success: the operation's createdAt to finishedAt, ms. */
  readonly ms: number;
  readonly steps: readonly Step[];
}

/** Queues a deploy over HTTP, waits for it; throws unless it succeeded. */
export async function deploy(side: Side, app: string): Promise<Deployed> {
  const plane = side.plane!;
  const response = await fetch(`${plane.url}/api/apps/${app}/deploy`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  const body = (await response.json()) as { operation: { id: string }; deploymentId: string };
  if (response.status !== 202) throw new Error(`deploy ${app}: HTTP ${response.status} ${JSON.stringify(body)}`);
  const operation = await plane.deploys.worker.waitFor(body.operation.id, 300_000);
  const steps = (
    (await (await fetch(`${plane.url}/api/v1/deployments/${body.deploymentId}/steps`)).json()) as {
      steps: Step[];
    }
  ).steps;
  if (operation.status !== 'succeeded')
    throw new Error(
      `${side.runtime} deploy of ${app}: ${operation.status} ${operation.lastError ?? ''}; steps: ${steps
        .map((s) => `${s.step} ${s.status}`)
        .join(', ')}`,
    );
  return { ms: Date.parse(operation.finishedAt ?? '') - Date.parse(operation.createdAt), steps };
}

export const stepMs = (s: Step) => (s.endedAt ? Date.parse(s.endedAt) - Date.parse(s.startedAt) : NaN);
export const buildMs = (d: Deployed) => stepMs(d.steps.find((s) => s.step === 'build')!);

export function releaseOf(side: Side, app: string) {
  const release = getApp(side.plane!.db, app)?.release;
  if (!release) throw new Error(`${side.runtime}: ${app} has no release`);
  return { dir: release.dir, manifest: readReleaseManifest(release.dir)! };
}
