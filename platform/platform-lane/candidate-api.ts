/**
 * A candidate API: the release's `serve --only control` (its `bin/svc.js` or its `svc` executable,
 * {@link releaseCommand}) on a free loopback port, with operation recovery and workers off, on a
 * throwaway data folder (a consistent copy of control.db made by the caller) and an empty apps
 * folder, so it runs no app, writes nothing outside its folder and sends nothing off the host;
 * checked, then stopped.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { waitForApi } from './api-probe.js';
import { isProcessAlive, readProcess } from '../local-scheduler/tasks/process-table.js';
import { releaseCommand } from './release-command.js';

/** Settings a candidate must not inherit: targets outside its throwaway folder or off the host. */
const WITHHELD = [
  'SVC_EVENT_SINK_URL',
  'SVC_EVENT_SINK_KEY_ID',
  'SVC_EVENT_SINK_SECRET',
  'SVC_TUNNEL_CONFIG',
  'SVC_TUNNEL_CREDENTIALS_FILE',
  'SVC_TUNNEL_RELOAD_COMMAND',
  'SVC_EDGE_API_TOKEN',
  'SVC_EDGE_ZONE_ID',
  'SVC_S3_ENDPOINT',
  'SVC_S3_ACCESS_KEY',
  'SVC_S3_SECRET_KEY',
  'SVC_KUBECONFIG',
  'SVC_SCHEDULER_DRIVER',
  'SVC_PLATFORM_DIR',
  'SVC_AGENT_RESTART_COMMAND',
  'SVC_AGENT_RESTART_MODE',
];

/** What the candidate check saw. */
export interface CandidateOutcome {
  readonly ok: boolean;
  readonly message: string;
}

/** A free loopback port (bound then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/**
 * Boots the release at `releaseDir` as a candidate in `workDir` (which holds `data/control.db`),
 * waits until it is healthy and reports `releaseId`, then stops it.
 */
export async function checkCandidate(options: {
  releaseDir: string;
  releaseId: string;
  workDir: string;
  env: Readonly<Record<string, string | undefined>>;
  timeoutMs: number;
  token?: string;
  signal: AbortSignal;
}): Promise<CandidateOutcome> {
  let command: [string, ...string[]];
  try {
    command = releaseCommand(options.releaseDir);
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
  const [program, ...leading] = command;
  const port = await freePort();
  const data = path.join(options.workDir, 'data');
  const apps = path.join(options.workDir, 'apps');
  fs.mkdirSync(data, { recursive: true });
  fs.mkdirSync(apps, { recursive: true });
  const env: Record<string, string | undefined> = { ...options.env };
  for (const name of WITHHELD) delete env[name];
  Object.assign(env, {
    SVC_PORT: String(port),
    SVC_HOST: '127.0.0.1',
    SVC_DATA_DIR: data,
    SVC_APPS_DIR: apps,
    SVC_SNAPSHOTS_DIR: path.join(options.workDir, 'snapshots'),
    SVC_OPERATION_WORKER: 'false',
    SVC_POSTGRES_MANAGED: 'false',
    SVC_CAPACITY_CHECK_INTERVAL: 'off',
    SVC_EDGE_SYNC_INTERVAL: 'off',
    SVC_AGENT: 'off',
  });
  const logFile = path.join(options.workDir, 'candidate.log');
  const log = fs.openSync(logFile, 'a', 0o600);
  let child: ChildProcess;
  try {
    child = spawn(program, [...leading, 'serve', '--only', 'control'], {
      cwd: options.workDir,
      env,
      stdio: ['ignore', log, log],
    });
  } finally {
    fs.closeSync(log);
  }
  if (child.pid !== undefined)
    fs.writeFileSync(
      path.join(options.workDir, CANDIDATE_RECORD),
      JSON.stringify({ pid: child.pid, startTime: readProcess(child.pid)?.startTime }),
    );
  let exited: string | undefined;
  const gone = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = signal ? `killed by ${signal}` : `exit code ${code}`;
      resolve();
    }),
  );
  try {
    const url = `http://127.0.0.1:${port}`;
    const outcome = await waitForApi(() => url, {
      release: options.releaseId,
      timeoutMs: options.timeoutMs,
      alive: () => exited === undefined,
      signal: options.signal,
      ...(options.token === undefined ? {} : { token: options.token }),
    });
    if (outcome.ok) return { ok: true, message: `candidate on port ${port}: ${outcome.reason}` };
    return {
      ok: false,
      message: `candidate on port ${port}: ${exited ? `exited (${exited})` : outcome.reason}; log tail: ${tail(logFile)}`,
    };
  } finally {
    if (exited === undefined) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await gone;
      clearTimeout(timer);
    }
  }
}

const CANDIDATE_RECORD = 'candidate.json';

/**
 * Stops candidate APIs a killed agent left running (recorded in each throwaway folder) and
 * removes the folders; the host agent calls it at start.
 */
export function reapCandidates(scratchDir: string): number {
  let reaped = 0;
  let names: string[] = [];
  try {
    names = fs.readdirSync(scratchDir);
  } catch {
    return 0;
  }
  for (const name of names) {
    const dir = path.join(scratchDir, name);
    try {
      const record = JSON.parse(fs.readFileSync(path.join(dir, CANDIDATE_RECORD), 'utf8')) as {
        pid?: number;
        startTime?: string;
      };
      if (record.pid !== undefined && isProcessAlive(record.pid, record.startTime)) {
        process.kill(record.pid, 'SIGKILL');
        reaped += 1;
      }
    } catch {
      // No record: nothing was started there.
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return reaped;
}

function tail(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').trim().slice(-1500) || '(empty)';
  } catch {
    return '(none)';
  }
}
