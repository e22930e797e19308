/**
 * A control plane with real apps for the wake gateway tests: a git repo with a small HTTP server,
 * a release built by the release builder, and specs committed to the apps folder.
 */
import http from 'node:http';
import net from 'node:net';
import type { ExecutionContext } from 'ava';
import type { ControlPlane } from '../../wiring/control-plane.js';
import { startPlaneWithApps } from '../helpers/plane-with-apps.js';
import type { SvcConfig } from '../../platform/config.js';
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

export { git } from '../helpers/plane-with-apps.js';

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
export async function startWithApps(
  t: ExecutionContext,
  apps: readonly WakeAppSpec[],
  env: Record<string, string> = {},
): Promise<{ plane: ControlPlane; config: SvcConfig }> {
  const { plane, config } = await startPlaneWithApps(t, {
    server: APP_SERVER,
    apps: apps.map((app) => ({ name: app.name, spec: wakeSpec(app) })),
    env,
  });
  return { plane, config };
}

/** A plain HTTP request with a chosen Host header (fetch cannot set Host). */
export function hostRequest(
  url: string,
  options: { host?: string; method?: string; body?: string | Buffer; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string; json: () => any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: options.method ?? 'GET',
        agent: false,
        headers: { ...(options.host ? { host: options.host } : {}), ...options.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/**
 * Resolves with the first truthy value of `check`, re-evaluated on every registry change,
 * allocation change and reconcile (no polling), bounded by a timeout.
 */
export async function waitForState<T>(
  plane: ControlPlane,
  check: () => Promise<T | undefined | false>,
  what: string,
  timeoutMs = 15_000,
): Promise<T> {
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
