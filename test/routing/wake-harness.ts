/**
 * A control plane with real apps for the wake gateway tests: a git repo with a small HTTP server,
 * a release built by the release builder, and specs committed to the apps folder.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import { closePlaneAndStopApps } from '../helpers/stop-apps.js';
import { startControlPlane, type ControlPlane } from '../../api/control/start-control-plane.js';
import { ReleaseBuilder } from '../../platform/release-builder/index.js';
import { silentLogger } from '../../platform/logger.js';
import type { SvcConfig } from '../../platform/config.js';
import { getApp, setAppRelease } from '../../store/control/apps.js';
import { testConfig } from '../helpers/test-config.js';
import { tempDir } from '../helpers/temp-dir.js';
import { waitForReconciled } from '../helpers/wait-for.js';
import { waitForChange } from '../helpers/wait-for.js';

/** The app: answers with its pid, path, Host and forwarded headers; echoes POST bodies as they stream; `/cookies` sets two cookies and a hop-by-hop header; `/hangup` closes the connection unanswered; `/stream` never ends and `/streams-closed` counts those whose client left; upgrades echo raw bytes. */
export const APP_SERVER = `import http from 'node:http';
const healthy = process.env.NEVER_READY !== '1';
let streamsClosed = 0;
const server = http.createServer((req, res) => {
  if (req.url === '/healthz') { res.writeHead(healthy ? 200 : 503); res.end(healthy ? 'ok' : 'never'); return; }
  if (req.method === 'POST') { res.writeHead(200, { 'content-type': 'application/octet-stream' }); req.pipe(res); return; }
  if (req.url === '/hangup') { req.socket.destroy(); return; }
  if (req.url === '/stream') { res.writeHead(200); res.write('first'); res.on('close', () => { streamsClosed += 1; }); return; }
  if (req.url === '/streams-closed') { res.end(String(streamsClosed)); return; }
  if (req.url === '/cookies') { res.writeHead(200, [['set-cookie', 'a=1'], ['set-cookie', 'b=2'], ['x-app', 'yes'], ['connection', 'x-app-hop'], ['x-app-hop', 'secret']]); res.end('cookies'); return; }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ pid: process.pid, url: req.url, host: req.headers.host, headers: req.headers }));
});
server.on('upgrade', (req, socket) => {
  socket.write('HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n\\r\\n');
  socket.pipe(socket);
});
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => { server.closeAllConnections(); server.close(() => process.exit(0)); });
`;

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.test', ...args], { cwd, encoding: 'utf8' }).trim();
}

/** A free TCP port on loopback. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface WakeAppSpec {
  readonly name: string;
  readonly hostname: string;
  readonly port: number;
  readonly min: number;
  readonly neverReady?: boolean;
}

export function wakeSpec(app: WakeAppSpec): string {
  return `name: ${app.name}
deploy: true
processes:
  web:
    port: ${app.port}
    health:
      path: /healthz
      interval: 50ms
      timeout: 1s
    scaling:
      min: ${app.min}
    resources:
      memory: 128
${app.neverReady ? 'env:\n  NEVER_READY: "1"\n' : ''}endpoints:
  - url: ${app.hostname}
`;
}

/** A running control plane with the given apps committed and released. */
export async function startWithApps(t: ExecutionContext, apps: readonly WakeAppSpec[], env: Record<string, string> = {}): Promise<{ plane: ControlPlane; config: SvcConfig }> {
  const root = tempDir(t);
  const code = path.join(root, 'code');
  fs.mkdirSync(code);
  fs.writeFileSync(path.join(code, 'server.mjs'), APP_SERVER);
  fs.writeFileSync(path.join(code, 'Dockerfile'), 'FROM node:20-alpine\nWORKDIR /app\nCOPY . .\nCMD ["node", "server.mjs"]\n');
  git(code, 'init', '-q', '-b', 'main');
  git(code, 'add', '-A');
  git(code, 'commit', '-q', '-m', 'app');
  const config = testConfig(t, env);
  fs.mkdirSync(config.appsDir, { recursive: true });
  git(config.appsDir, 'init', '-q', '-b', 'main');
  for (const app of apps) {
    fs.mkdirSync(path.join(config.appsDir, app.name), { recursive: true });
    fs.writeFileSync(path.join(config.appsDir, app.name, 'infraspec.yaml'), wakeSpec(app));
  }
  git(config.appsDir, 'add', '-A');
  git(config.appsDir, 'commit', '-q', '-m', 'apps');
  const plane = await startControlPlane(config, silentLogger());
  t.teardown(() => closePlaneAndStopApps(plane, config));
  const builder = new ReleaseBuilder({ dataDir: config.dataDir, logger: silentLogger() });
  const release = await builder.build({ app: apps[0]!.name, repoUrl: code, ref: 'main' });
  for (const app of apps) {
    const own = app === apps[0] ? release : await builder.build({ app: app.name, repoUrl: code, ref: 'main' });
    await waitForReconciled([plane.reconcilers.specController], () => getApp(plane.db, app.name)?.spec != null, { what: `spec of ${app.name} read` });
    setAppRelease(plane.db, app.name, { commit: own.manifest.commit, dir: own.dir });
    plane.reconcilers.appController.enqueue(app.name);
  }
  return { plane, config };
}

/** A plain HTTP request with a chosen Host header (fetch cannot set Host). */
export function hostRequest(url: string, options: { host?: string; method?: string; body?: string | Buffer; headers?: Record<string, string> } = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string; json: () => any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? 'GET', agent: false, headers: { ...(options.host ? { host: options.host } : {}), ...options.headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/**
 * Resolves with the first truthy value of `check`, re-evaluated on every registry change,
 * allocation change and reconcile (no polling), bounded by a timeout.
 */
export async function waitForState<T>(plane: ControlPlane, check: () => Promise<T | undefined | false>, what: string, timeoutMs = 15_000): Promise<T> {
  const scheduler = await plane.reconcilers.targets.get();
  return waitForChange(
    [
      (listener) => plane.reconcilers.registry.watch(() => listener()),
      (listener) => scheduler.watch(() => listener()),
      (listener) => plane.reconcilers.appController.onReconciled(() => listener()),
      (listener) => plane.routing.controller.onReconciled(() => listener()),
    ],
    check,
    { what, timeoutMs },
  );
}
