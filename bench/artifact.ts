/**
 * bench/artifact: what the release artifact costs (ADR 0140). Prints (does not assert):
 *  (a) sizes: the archive, the `svc` executable, the bundled script inside it, with and without
 *      V8's code cache in the executable;
 *  (b) start of a short command (`svc version`), alternated in one run: the single executable
 *      with and without the code cache, the same bundle run by a plain `node` (what a "Node runtime
 *      plus one script behind a launcher" artifact would start), and `node bin/svc.js` on the
 *      checkout's tsc build (`npm start`'s path);
 *  (c) cold start of `svc serve` to the first 200 from `/api/health` (fresh data folder each time,
 *      managed PostgreSQL off), the artifact beside `node bin/svc.js serve` on the tsc build,
 *      alternated. "Cold" is a new process, not an empty page cache.
 *
 * Run: node --import tsx bench/artifact.ts [--runs N]
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  CHECKOUT,
  bundleProgram,
  packageArtifact,
  type PackagedArtifact,
} from '../scripts/package/package-artifact.js';
import { arg, median, percentile } from './lib/bench-args.js';

const runs = arg('runs', 7);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-artifact-'));
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
const ms = (values: readonly number[]) =>
  `p50 ${median(values).toFixed(0)} ms, min ${Math.min(...values).toFixed(0)} ms, max ${percentile(values, 100).toFixed(0)} ms`;

interface Candidate {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
}

function unpack(built: PackagedArtifact, into: string): string {
  fs.mkdirSync(into);
  execFileSync('tar', ['-xzf', built.archive, '-C', into]);
  return path.join(into, fs.readdirSync(into)[0]!, 'svc');
}

/** Milliseconds from spawn to exit of `command args` (exit 0 required). */
function timeRun(candidate: Candidate, extra: readonly string[]): number {
  const started = performance.now();
  execFileSync(candidate.command, [...candidate.args, ...extra], {
    cwd: work,
    stdio: 'ignore',
    env: { ...process.env, SVC_FROM_SOURCE: '' },
  });
  return performance.now() - started;
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

/** Milliseconds from spawn of `serve` to the first 200 of /api/health on a fixed free port. */
async function timeServe(candidate: Candidate, port: number): Promise<number> {
  const data = fs.mkdtempSync(path.join(work, 'data-'));
  fs.mkdirSync(path.join(data, 'apps'));
  const env = {
    ...process.env,
    SVC_FROM_SOURCE: '',
    SVC_DATA_DIR: data,
    SVC_APPS_DIR: path.join(data, 'apps'),
    SVC_PORT: String(port),
    SVC_KNOWLEDGE_PORT: '0',
    SVC_KNOWLEDGE_ADMIN_PORT: '0',
    SVC_POSTGRES_MANAGED: 'false',
    SVC_LOG_LEVEL: 'warn',
  };
  const started = performance.now();
  const child = spawn(candidate.command, [...candidate.args, 'serve'], { cwd: work, env, stdio: 'ignore' });
  try {
    // Polled every 2 ms: the figure is a start time, and nothing tells from outside when the port opens.
    while (!(await healthy(`http://127.0.0.1:${port}/api/health`))) {
      if (child.exitCode !== null) throw new Error(`${candidate.name} exited with ${child.exitCode}`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    return performance.now() - started;
  } finally {
    await new Promise((resolve) => {
      child.once('exit', resolve);
      child.kill('SIGTERM');
    });
    fs.rmSync(data, { recursive: true, force: true });
  }
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

try {
  console.log(
    `[artifact] load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}, ${os.cpus().length} cores`,
  );
  const cached = await packageArtifact({ outDir: path.join(work, 'cached') });
  const uncached = await packageArtifact({ outDir: path.join(work, 'uncached'), codeCache: false });
  const script = path.join(work, 'svc.cjs');
  await bundleProgram(script, cached.release);
  console.log(
    `(a) archive ${mb(cached.archiveBytes)} (${path.basename(cached.archive)}); svc executable ${mb(cached.executableBytes)} with code cache, ${mb(uncached.executableBytes)} without; bundled script ${mb(cached.bundleBytes)}; node binary alone ${mb(fs.statSync(process.execPath).size)}`,
  );

  execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: CHECKOUT, stdio: 'inherit' });
  const sea: Candidate = {
    name: 'single executable, code cache',
    command: unpack(cached, path.join(work, 'sea')),
    args: [],
  };
  const seaNoCache: Candidate = {
    name: 'single executable, no code cache',
    command: unpack(uncached, path.join(work, 'sea-nocache')),
    args: [],
  };
  const launcher: Candidate = {
    name: 'node + bundled script (launcher form)',
    command: process.execPath,
    args: [script],
  };
  const checkout: Candidate = {
    name: 'node bin/svc.js (checkout, tsc build)',
    command: process.execPath,
    args: [path.join(CHECKOUT, 'bin/svc.js')],
  };

  const versions = new Map<string, number[]>();
  for (const c of [sea, seaNoCache, launcher, checkout]) timeRun(c, ['version']); // warm the page cache
  for (let i = 0; i < runs; i++) {
    for (const c of [sea, seaNoCache, launcher, checkout])
      versions.set(c.name, [...(versions.get(c.name) ?? []), timeRun(c, ['version'])]);
  }
  console.log(`(b) \`svc version\`, ${runs} runs each, alternated:`);
  for (const [name, values] of versions) console.log(`    ${name}: ${ms(values)}`);

  const serves = new Map<string, number[]>();
  for (let i = 0; i < runs; i++) {
    for (const c of [sea, checkout])
      serves.set(c.name, [...(serves.get(c.name) ?? []), await timeServe(c, await freePort())]);
  }
  console.log(`(c) \`svc serve\` to the first 200 of /api/health, fresh data folder, ${runs} runs each, alternated:`);
  for (const [name, values] of serves) console.log(`    ${name}: ${ms(values)}`);
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
