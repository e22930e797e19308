/**
 * A control plane with one running app (`hello`, a small HTTP server) and one app with no release
 * (`idle`), for the exec tests; and a WebSocket client for exec sessions.
 */
import { once } from 'node:events';
import type { ExecutionContext } from 'ava';
import WebSocket from 'ws';
import { startPlaneWithApps } from '../helpers/plane-with-apps.js';
import { waitForReconciled } from '../helpers/wait-for.js';
import { freePort } from '../routing/wake-harness.js';
import type { ControlPlane } from '../../wiring/control-plane.js';
import type { SvcConfig } from '../../platform/config.js';

export const SERVER = `import http from 'node:http';
const server = http.createServer((req, res) => res.end(req.url === '/healthz' ? 'ok' : 'hello'));
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

const spec = (name: string, port: number) => `name: ${name}
deploy: true
build:
  dockerfile: Dockerfile
env:
  GREETING: hello-from-spec
processes:
  web:
    port: ${port}
    health:
      path: /healthz
      interval: 100ms
      timeout: 1s
    resources:
      memory: 128
`;

/** Starts the plane and waits until `hello` runs. */
export async function startExecPlane(
  t: ExecutionContext,
  env: Record<string, string> = {},
): Promise<{ plane: ControlPlane; config: SvcConfig; pid: number }> {
  const { plane, config } = await startPlaneWithApps(t, {
    server: SERVER,
    env,
    apps: [
      { name: 'hello', spec: spec('hello', await freePort()) },
      { name: 'idle', spec: spec('idle', await freePort()), release: false },
    ],
  });
  const pid = await waitForReconciled(
    [plane.reconcilers.appController],
    async () => {
      const scheduler = await plane.reconcilers.targets.get();
      const running = (await scheduler.listAllocations({ app: 'hello' })).find((a) => a.status === 'running');
      return running?.task.pid;
    },
    { what: 'hello running', timeoutMs: 30_000 },
  );
  return { plane, config, pid };
}

/** An attached exec session: everything printed so far, and its exit message. */
export interface ExecClient {
  readonly ws: WebSocket;
  output(): string;
  /** Resolves when the output matches `pattern`. */
  waitFor(pattern: RegExp): Promise<string>;
  send(data: string): void;
  resize(cols: number, rows: number): void;
  readonly exited: Promise<{ exitCode: number; signal: number | null; reason: string }>;
}

/** Attaches to `/api/v1/exec-sessions/{id}/attach`. */
export async function attachSession(
  baseUrl: string,
  id: string,
  options: { headers?: Record<string, string>; protocols?: string[] } = {},
): Promise<ExecClient> {
  const ws = new WebSocket(
    `${baseUrl.replace(/^http/, 'ws')}/api/v1/exec-sessions/${id}/attach`,
    options.protocols ?? [],
    { headers: options.headers ?? {} },
  );
  let text = '';
  const waiters: (() => void)[] = [];
  let resolveExit: (exit: { exitCode: number; signal: number | null; reason: string }) => void;
  const exited = new Promise<{ exitCode: number; signal: number | null; reason: string }>((resolve) => {
    resolveExit = resolve;
  });
  ws.on('message', (raw: Buffer) => {
    const frame = JSON.parse(raw.toString()) as { type: string; data?: string };
    if (frame.type === 'stdout') text += frame.data;
    if (frame.type === 'exit') resolveExit(frame as never);
    for (const waiter of waiters.splice(0)) waiter();
  });
  await once(ws, 'open');
  return {
    ws,
    output: () => text,
    waitFor: (pattern) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`timed out waiting for ${pattern} in ${JSON.stringify(text)}`)),
          15_000,
        );
        const check = () => {
          const match = pattern.exec(text);
          if (match) {
            clearTimeout(timer);
            resolve(match[0]);
          } else waiters.push(check);
        };
        check();
      }),
    send: (data) => ws.send(JSON.stringify({ type: 'stdin', data })),
    resize: (cols, rows) => ws.send(JSON.stringify({ type: 'resize', cols, rows })),
    exited,
  };
}
