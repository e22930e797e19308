/**
 * A control plane with real apps for the observability tests: a git repo with a small HTTP server
 * that serves health and text-format metrics, a release per app built by the release builder, and
 * specs committed to the apps folder. Also a real Prometheus server on loopback.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import { type ControlPlane } from '../../wiring/control-plane.js';
import type { SvcConfig } from '../../platform/config.js';
import { tempDir } from '../helpers/temp-dir.js';
import { waitForChange, type ChangeSource } from '../helpers/wait-for.js';
import { freePort } from '../routing/wake-harness.js';
import { startPlaneWithApps as startPlaneWithReleasedApps } from '../helpers/plane-with-apps.js';

/** The app: `/healthz` (503 with NEVER_READY=1) and text-format metrics at `/metrics` and `/app-metrics`. */
export const METRICS_APP = `import http from 'node:http';
const healthy = process.env.NEVER_READY !== '1';
const server = http.createServer((req, res) => {
  if (req.url === '/healthz') { res.writeHead(healthy ? 200 : 503); res.end(healthy ? 'ok' : 'never'); return; }
  if (req.url === '/metrics' || req.url === '/app-metrics') {
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
    res.end('# HELP demo_scrapes_total Scrapes answered.\\n# TYPE demo_scrapes_total counter\\ndemo_scrapes_total{path="' + req.url + '"} 1\\n');
    return;
  }
  res.writeHead(404); res.end('no');
});
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => { server.closeAllConnections(); server.close(() => process.exit(0)); });
`;

/** An app of the harness: its spec text, and whether it gets a release (without one it never runs). */
export interface HarnessApp {
  readonly name: string;
  readonly spec: string;
  readonly release?: boolean;
}

/** A running control plane with `apps` committed and (unless `release: false`) released. */
export async function startPlaneWithApps(
  t: ExecutionContext,
  apps: readonly HarnessApp[],
  env: Record<string, string> = {},
): Promise<{ plane: ControlPlane; config: SvcConfig }> {
  const { plane, config } = await startPlaneWithReleasedApps(t, {
    server: METRICS_APP,
    apps,
    env,
    tempPrefix: 'svc-obs-',
  });
  return { plane, config };
}

/**
 * A change source that ticks every `ms`: only for external processes (Prometheus) that offer no
 * change notification, and always bounded by `waitForChange`'s timeout.
 */
export function ticks(ms: number): ChangeSource {
  return (listener) => {
    const timer = setInterval(listener, ms);
    return () => clearInterval(timer);
  };
}

/** A Prometheus server run by a test. */
export interface RunningPrometheus {
  readonly url: string;
  readonly child: ChildProcess;
  /** Resolves with the first truthy `check` of the server's state, polled (it has no push notifications). */
  until<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs?: number): Promise<T>;
}

/** Starts the Debian package's `prometheus` on `configFile`, stopped (SIGTERM, then awaited) in teardown. */
export async function startPrometheus(t: ExecutionContext, configFile: string): Promise<RunningPrometheus> {
  const port = await freePort();
  const storage = tempDir(t, 'svc-prom-data-');
  const child = spawn(
    'prometheus',
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${storage}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    {
      cwd: path.dirname(configFile),
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = `${stderr}${chunk.toString('utf8')}`.slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  });
  const url = `http://127.0.0.1:${port}`;
  const until = async <T>(
    what: string,
    check: () => Promise<T | undefined | false>,
    timeoutMs = 30_000,
  ): Promise<T> => {
    try {
      return await waitForChange(
        [ticks(100)],
        async () => {
          if (child.exitCode !== null) throw new Error(`prometheus exited with ${child.exitCode}`);
          try {
            return await check();
          } catch {
            return undefined;
          }
        },
        { what, timeoutMs },
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}; prometheus said: ${stderr.trim() || 'nothing'}`, { cause: error });
    }
  };
  await until('prometheus ready', async () => (await fetch(`${url}/-/ready`)).ok);
  return { url, child, until };
}
