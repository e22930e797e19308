/**
 * Crash test of durable operations: a stream of deploys and rollbacks across several trivial apps
 * while the control plane is killed with SIGKILL at random moments and restarted. After every
 * restart no operation is left running under a dead owner; at the end every operation ended
 * succeeded, failed with a visible reason or cancelled (0 lost), the attempts of one app never
 * overlap, and control.db passes PRAGMA integrity_check.
 *
 *   node --import tsx bench/operations-crash.ts [kills=50] [operations=200] [apps=10]
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { startSvc } from '../test/helpers/cli.js';

/** Options of one run. */
export interface CrashRunOptions {
  readonly kills: number;
  readonly operations: number;
  readonly apps: number;
  readonly log?: (line: string) => void;
}

/** What a run observed. */
export interface CrashRunResult {
  readonly kills: number;
  readonly submitted: number;
  /** Accepted rollbacks among them. */
  readonly rollbacks: number;
  readonly byStatus: Record<string, number>;
  readonly lost: number;
  readonly failedWithoutReason: number;
  readonly overlapping: number;
  readonly strandedAfterRestart: number;
  readonly requeuedByRecovery: number;
  readonly failedByRecovery: number;
  readonly integrity: string;
  /** App processes left running that the local driver did not know after the kills (ended by pid). */
  readonly orphanedAppProcesses: number;
  readonly seconds: number;
}

const SERVER =
  "import http from 'node:http';\nconst s = http.createServer((q, r) => r.end('ok'));\ns.listen(Number(process.env.PORT), '127.0.0.1');\nprocess.on('SIGTERM', () => process.exit(0));\n";

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.test', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs the crash test in a temporary folder and returns its counts. */
export async function runCrashTest(options: CrashRunOptions): Promise<CrashRunResult> {
  const log = options.log ?? (() => undefined);
  const started = Date.now();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-crash-'));
  // Apps run as their own users below it (ADR 0047): they must be able to enter it.
  fs.chmodSync(root, 0o711);
  const appsDir = path.join(root, 'apps');
  const dataDir = path.join(root, 'data');
  fs.mkdirSync(appsDir, { recursive: true });
  git(appsDir, 'init', '-q', '-b', 'main');
  const apps = Array.from({ length: options.apps }, (_, i) => `crash-${i}`);
  const commits: string[] = [];
  for (const version of ['v1', 'v2']) {
    for (const app of apps) {
      fs.mkdirSync(path.join(appsDir, app), { recursive: true });
      fs.writeFileSync(
        path.join(appsDir, app, 'infraspec.yaml'),
        `name: ${app}\ndeploy: true\nprocesses:\n  web:\n    port: 8080\n    health:\n      path: /\n      interval: 50ms\n      timeout: 1s\n    resources:\n      memory: 64\n`,
      );
      fs.writeFileSync(
        path.join(appsDir, app, 'Dockerfile'),
        'FROM node:20-alpine\nWORKDIR /app\nCOPY . .\nCMD ["node", "server.mjs"]\n',
      );
      fs.writeFileSync(path.join(appsDir, app, 'server.mjs'), `// ${version}\n${SERVER}`);
    }
    git(appsDir, 'add', '-A');
    git(appsDir, 'commit', '-q', '-m', version);
    commits.push(git(appsDir, 'rev-parse', 'HEAD'));
  }
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // No app declares a database: the managed PostgreSQL server would only add an initdb to every start.
  const env = {
    SVC_PORT: String(port),
    SVC_POSTGRES_MANAGED: 'false',
    SVC_DATA_DIR: dataDir,
    SVC_APPS_DIR: appsDir,
    SVC_LOG_LEVEL: 'info',
    SVC_OPERATION_WORKERS: '4',
    SVC_DEPLOY_HEALTHY_TIMEOUT: '10s',
    SVC_KNOWLEDGE_PORT: '0',
    SVC_KNOWLEDGE_ADMIN_PORT: '0',
  };
  let child: ChildProcess | undefined;
  let owner = '';
  let strandedAfterRestart = 0;
  const start = async () => {
    const svc = await startSvc(['serve', '--only', 'control'], (line) => line.msg === 'control plane listening', {
      env,
      timeoutMs: 60_000,
    });
    child = svc.child;
    const active = (await (await fetch(`${url}/api/operations/active`)).json()) as {
      operations: { status: string; lockOwner: string | null }[];
      drain: { owner: string };
    };
    owner = active.drain.owner;
    // After a restart nothing may still be running under a dead owner.
    strandedAfterRestart += active.operations.filter((o) => o.status === 'running' && o.lockOwner !== owner).length;
  };
  await start();
  // Wait until the spec controller knows every app.
  for (;;) {
    const body = (await (await fetch(`${url}/api/apps`)).json()) as {
      apps: { name: string; conditions: { type: string; status: string }[] }[];
    };
    if (
      apps.every((a) =>
        body.apps.some((x) => x.name === a && x.conditions.some((c) => c.type === 'Valid' && c.status === 'True')),
      )
    )
      break;
    await sleep(50);
  }
  const submitted = new Set<string>();
  let rollbacks = 0;
  let sequence = 0;
  let down = false;
  const submitOne = async (): Promise<void> => {
    const n = sequence++;
    const app = apps[n % apps.length]!;
    let rollback = n >= apps.length * 2 && n % 3 === 0;
    let key = `crash-${n}`;
    for (;;) {
      try {
        const response = await fetch(`${url}/api/apps/${app}/${rollback ? 'rollback' : 'deploy'}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': key },
          body: JSON.stringify(rollback ? {} : { ref: commits[Math.floor(n / apps.length) % 2] }),
        });
        const body = (await response.json()) as { operation?: { id: string }; error?: { code: string } };
        if (response.status === 202 && body.operation) {
          submitted.add(body.operation.id);
          if (rollback) rollbacks += 1;
          return;
        }
        if (response.status === 409 && body.error?.code === 'no_rollback_target') {
          // Nothing older to return to yet: this slot of the stream becomes a deploy.
          rollback = false;
          key = `crash-${n}-deploy`;
          continue;
        }
      } catch {
        // the control plane is down: retry with the same key
      }
      await sleep(down ? 100 : 20);
    }
  };
  const submitter = (async () => {
    while (submitted.size < options.operations) {
      // Keep the queue short so earlier deploys finish and later rollbacks have a release to return to.
      for (;;) {
        try {
          const active = (await (await fetch(`${url}/api/operations/active`)).json()) as { operations: unknown[] };
          if (active.operations.length < apps.length) break;
        } catch {
          // down: wait for the restart
        }
        await sleep(50);
      }
      await submitOne();
      await sleep(Math.random() * 30);
    }
  })();
  for (let kill = 0; kill < options.kills; kill += 1) {
    // Spread the kills over the whole stream: the k-th waits for its share of accepted operations.
    const due = Math.floor((kill * options.operations) / options.kills);
    while (submitted.size < due) await sleep(20);
    await sleep(50 + Math.random() * 300);
    down = true;
    child?.kill('SIGKILL');
    await new Promise((r) => child?.once('exit', r));
    await start();
    down = false;
    log(`kill ${kill + 1}/${options.kills}: restarted; ${submitted.size} operations accepted so far`);
  }
  await submitter;
  // Let the queue drain.
  for (;;) {
    const active = (await (await fetch(`${url}/api/operations/active`)).json()) as { operations: unknown[] };
    if (active.operations.length === 0) break;
    await sleep(100);
  }
  child?.kill('SIGTERM');
  await new Promise((r) => child?.once('exit', r));
  const db = new Database(path.join(dataDir, 'control.db'), { readonly: true });
  const rows = db.prepare('SELECT id, status, last_error, app FROM operations').all() as {
    id: string;
    status: string;
    last_error: string | null;
    app: string;
  }[];
  const byStatus: Record<string, number> = {};
  for (const row of rows) byStatus[row.status] = (byStatus[row.status] ?? 0) + 1;
  const known = new Map(rows.map((r) => [r.id, r]));
  const lost = [...submitted].filter((id) => {
    const row = known.get(id);
    return !row || !['succeeded', 'failed', 'cancelled'].includes(row.status);
  }).length;
  const failedWithoutReason = rows.filter((r) => r.status === 'failed' && !r.last_error).length;
  const attempts = db
    .prepare('SELECT app, started_at, ended_at, outcome FROM operation_attempts ORDER BY app, started_at')
    .all() as { app: string; started_at: string; ended_at: string | null; outcome: string | null }[];
  let overlapping = 0;
  for (let i = 1; i < attempts.length; i += 1) {
    const previous = attempts[i - 1]!;
    const current = attempts[i]!;
    if (previous.app === current.app && (previous.ended_at === null || previous.ended_at > current.started_at))
      overlapping += 1;
  }
  const requeuedByRecovery = attempts.filter((a) => a.outcome === 'interrupted-requeued').length;
  const failedByRecovery = attempts.filter((a) => a.outcome === 'interrupted-failed').length;
  const integrity = (db.pragma('integrity_check', { simple: true }) as string) ?? 'unknown';
  db.close();
  // App processes outlive the API by design: stop them.
  orphans = 0;
  await stopAppProcesses(dataDir, appsDir);
  const orphanedAppProcesses = orphans;
  fs.rmSync(root, { recursive: true, force: true });
  return {
    kills: options.kills,
    submitted: submitted.size,
    rollbacks,
    byStatus,
    lost,
    failedWithoutReason,
    overlapping,
    strandedAfterRestart,
    requeuedByRecovery,
    failedByRecovery,
    integrity,
    orphanedAppProcesses,
    seconds: (Date.now() - started) / 1000,
  };
}

async function stopAppProcesses(dataDir: string, appsDir: string): Promise<void> {
  const { LocalRegistry } = await import('../platform/local-registry/index.js');
  const { LocalScheduler } = await import('../platform/local-scheduler/index.js');
  const { silentLogger } = await import('../platform/logger.js');
  void appsDir;
  const scheduler = await LocalScheduler.open({
    dataDir,
    registry: new LocalRegistry(),
    logger: silentLogger(),
    region: 'local',
  });
  for (const job of await scheduler.listJobs()) await scheduler.stopJob(job.spec.id, { purge: true });
  await scheduler.close();
  // A control plane killed in the middle of a roll can leave a process its driver state never
  // recorded (reported as orphanedAppProcesses): end what still runs from this run's folder, by pid.
  for (const pid of fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let cwd = '';
    try {
      cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
    } catch {
      continue;
    }
    if (cwd.startsWith(dataDir)) {
      orphans += 1;
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}

/** App processes found running from a run's folder after its driver stopped every job it knew. */
let orphans = 0;

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [kills = '50', operations = '200', apps = '10'] = process.argv.slice(2);
  const result = await runCrashTest({
    kills: Number(kills),
    operations: Number(operations),
    apps: Number(apps),
    log: (line) => console.log(line),
  });
  console.log(JSON.stringify(result, null, 2));
  const ok =
    result.lost === 0 &&
    result.overlapping === 0 &&
    result.failedWithoutReason === 0 &&
    result.strandedAfterRestart === 0 &&
    result.integrity === 'ok';
  console.log(ok ? 'crash test: PASS' : 'crash test: FAIL');
  process.exitCode = ok ? 0 : 1;
}
