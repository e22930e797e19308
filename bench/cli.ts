/**
 * bench/cli: how long the `svc` program takes to answer (ADR 0156). Prints (does not assert) the wall
 * time of `svc version`, `svc apps`, `svc status hello-web` and `svc validate <one spec>`, each run as
 * `node bin/svc.js` (the checkout's tsc build) and as the release artifact's single executable,
 * beside `node -e 0` (bare Node start-up) in the same run, alternated. The goal is each client
 * command within 2x of bare Node. A control plane (`svc serve --only control`, the sample apps, no
 * PostgreSQL) answers `apps` and `status`.
 *
 * Run: node --import tsx bench/cli.ts [--runs N]
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { CHECKOUT, packageArtifact } from '../scripts/package/package-artifact.js';
import { arg, median, percentile } from './lib/bench-args.js';

const runs = arg('runs', 15);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-cli-'));
fs.chmodSync(work, 0o711);

interface Candidate {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = http.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function healthy(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get(url, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.once('error', () => resolve(false));
  });
}

/** Milliseconds from spawn to exit; the command must exit 0. */
function timeRun(command: string, args: readonly string[], env: NodeJS.ProcessEnv): number {
  const started = performance.now();
  execFileSync(command, args, { cwd: work, stdio: 'ignore', env });
  return performance.now() - started;
}

const apps = path.join(work, 'apps');
fs.cpSync(path.join(CHECKOUT, 'fixtures/apps'), apps, { recursive: true });
const git = (...args: string[]) =>
  execFileSync('git', ['-C', apps, '-c', 'user.name=svc', '-c', 'user.email=svc@localhost', ...args]);
git('init', '-q', '-b', 'main');
git('add', '-A');
git('commit', '-q', '-m', 'sample apps');

const port = await freePort();
const env: NodeJS.ProcessEnv = {
  ...process.env,
  SVC_FROM_SOURCE: '',
  SVC_DATA_DIR: path.join(work, 'data'),
  SVC_APPS_DIR: apps,
  SVC_PORT: String(port),
  SVC_POSTGRES_MANAGED: 'false',
  SVC_LOG_LEVEL: 'warn',
};
let server: ReturnType<typeof spawn> | undefined;
try {
  console.log(
    `[cli] load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}, ${os.cpus().length} cores, ${runs} runs each, alternated`,
  );
  execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: CHECKOUT, stdio: 'inherit' });
  // The command bundles beside their compiled modules (ADR 0198), as `npm test` and the install build them.
  execFileSync(process.execPath, ['--import', 'tsx', 'scripts/build-cli.ts'], { cwd: CHECKOUT, stdio: 'inherit' });
  const artifact = await packageArtifact({ outDir: path.join(work, 'artifact') });
  fs.mkdirSync(path.join(work, 'release'));
  execFileSync('tar', ['-xzf', artifact.archive, '-C', path.join(work, 'release')]);
  const executable = path.join(work, 'release', fs.readdirSync(path.join(work, 'release'))[0]!, 'svc');

  server = spawn(process.execPath, [path.join(CHECKOUT, 'bin/svc.js'), 'serve', '--only', 'control'], {
    cwd: work,
    env,
    stdio: 'ignore',
  });
  // Polled: nothing tells from outside when the port opens.
  while (!(await healthy(`http://127.0.0.1:${port}/api/health`))) {
    if (server.exitCode !== null) throw new Error(`svc serve exited with ${server.exitCode}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }

  const candidates: Candidate[] = [
    { name: 'node bin/svc.js', command: process.execPath, args: [path.join(CHECKOUT, 'bin/svc.js')] },
    { name: 'release artifact', command: executable, args: [] },
  ];
  const commands: readonly (readonly string[])[] = [
    ['version'],
    ['apps'],
    ['status', 'hello-web'],
    ['validate', path.join(apps, 'hello-web/infraspec.yaml')],
  ];
  const bare: number[] = [];
  const times = new Map<string, number[]>();
  const key = (candidate: Candidate, command: readonly string[]) => `${candidate.name}: svc ${command.join(' ')}`;
  // One warm-up of each, for the page cache.
  timeRun(process.execPath, ['-e', '0'], env);
  for (const candidate of candidates)
    for (const command of commands) timeRun(candidate.command, [...candidate.args, ...command], env);
  for (let i = 0; i < runs; i++) {
    bare.push(timeRun(process.execPath, ['-e', '0'], env));
    for (const candidate of candidates)
      for (const command of commands) {
        const values = times.get(key(candidate, command)) ?? [];
        values.push(timeRun(candidate.command, [...candidate.args, ...command], env));
        times.set(key(candidate, command), values);
      }
  }
  const base = median(bare);
  const show = (values: readonly number[]) =>
    `p50 ${median(values).toFixed(0)} ms (min ${Math.min(...values).toFixed(0)}, max ${percentile(values, 100).toFixed(0)})`;
  console.log(`baseline node -e 0: ${show(bare)}`);
  for (const [name, values] of times)
    console.log(`${name.padEnd(70)} ${show(values)}  ${(median(values) / base).toFixed(2)}x node -e 0`);
} finally {
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server!.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  }
  fs.rmSync(work, { recursive: true, force: true });
}
