// tier: quick
import test, { type ExecutionContext } from 'ava';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { ApiRestarter } from '../../platform/platform-lane/api-process.js';
import { isProcessAlive } from '../../platform/local-scheduler/tasks/process-table.js';
import { tempDir } from '../helpers/temp-dir.js';
import { waitForChange } from '../helpers/wait-for.js';

// A release whose `svc serve` stands in for the real one: it loads for FAKE_BOOT_MS, then listens on
// SVC_PORT and records itself in api.json as `svc serve` does; a port taken makes it exit 3.
const FAKE_SERVE = `
const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');
const port = Number(process.env.SVC_PORT);
process.on('SIGUSR2', () => process.exit(0));
process.on('SIGTERM', () => process.exit(0));
setTimeout(() => {
  const server = http.createServer((req, res) => res.end(String(process.pid)));
  server.on('error', (error) => { console.error('listen failed: ' + error.code); process.exit(3); });
  server.listen(port, '127.0.0.1', () => {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    const startTime = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    const record = { pid: process.pid, startTime, argv: process.argv.slice(3), cwd: process.cwd(), url: 'http://127.0.0.1:' + port, root: path.dirname(__dirname) };
    fs.writeFileSync(path.join(process.env.FAKE_PLATFORM_DIR, 'api.json.tmp'), JSON.stringify(record));
    fs.renameSync(path.join(process.env.FAKE_PLATFORM_DIR, 'api.json.tmp'), path.join(process.env.FAKE_PLATFORM_DIR, 'api.json'));
  });
}, Number(process.env.FAKE_BOOT_MS));
`;

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A platform folder whose `current` release is {@link FAKE_SERVE}, and whose recorded API is gone (a release that failed its postflight). */
async function fakePlatform(t: ExecutionContext) {
  const root = tempDir(t);
  const platformDir = path.join(root, 'platform');
  const release = path.join(root, 'releases', 'r1');
  fs.mkdirSync(path.join(release, 'bin'), { recursive: true });
  fs.mkdirSync(platformDir);
  fs.writeFileSync(path.join(release, 'bin', 'svc.js'), FAKE_SERVE);
  const currentLink = path.join(root, 'current');
  fs.symlinkSync(release, currentLink);
  const url = `http://127.0.0.1:${await freePort()}`;
  const dead = spawnSync('true').pid;
  fs.writeFileSync(
    path.join(platformDir, 'api.json'),
    JSON.stringify({ pid: dead, startTime: '1', argv: [], cwd: root, url, root: release }),
  );
  const options = {
    platformDir,
    currentLink,
    env: { ...process.env, FAKE_PLATFORM_DIR: platformDir, FAKE_BOOT_MS: '600' },
    stopTimeoutMs: 5000,
  };
  const started: number[] = [];
  t.teardown(() => {
    for (const pid of started)
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
  });
  return { root, platformDir, url, dead, options, started };
}

/** The record of the API `restarter` started, once that API listens (it renames its record into the platform folder). */
function newRecord(platformDir: string, restarter: ApiRestarter, dead: number) {
  return waitForChange(
    [
      (listener) => {
        const watcher = fs.watch(platformDir, listener);
        return () => watcher.close();
      },
    ],
    () => {
      const record = restarter.record();
      return record !== undefined && record.pid !== dead ? record : undefined;
    },
    { timeoutMs: 10_000, what: 'the new API to record itself' },
  );
}

/**
 * A next agent restarts the API: the orphan is stopped first, then the one it starts records itself,
 * runs, and alone answers on the port.
 */
async function nextAgentReplaces(
  t: ExecutionContext,
  platform: Omit<Awaited<ReturnType<typeof fakePlatform>>, 'root'>,
  orphan: number,
): Promise<void> {
  const next = new ApiRestarter(platform.options);
  await next.restart();
  t.false(isProcessAlive(orphan, undefined), 'the API the dead agent started was stopped before the new one started');
  const recorded = await newRecord(platform.platformDir, next, platform.dead);
  platform.started.push(recorded.pid);
  t.not(recorded.pid, orphan);
  t.true(next.startedAlive(), 'the API this agent started runs');
  t.is(await (await fetch(platform.url)).text(), String(recorded.pid));
}

test('an agent that restarts the API after the previous agent died between spawning an API and its record stops that API first: one API runs, the one it started', async (t) => {
  const { root, platformDir, url, dead, options, started } = await fakePlatform(t);

  // The first agent starts the API (a rollback's restart step), then dies before that API listens.
  const first = new ApiRestarter(options);
  const orphan = first.start({ argv: [], cwd: root, url });
  started.push(orphan);
  t.true(orphan > 0);

  // The next agent runs the step again.
  await nextAgentReplaces(t, { platformDir, url, dead, options, started }, orphan);
});

test('an agent killed between spawning an API and writing its pid leaves that API findable by the spawn id it carries: the next agent stops it before starting its own', async (t) => {
  const { root, platformDir, url, dead, options, started } = await fakePlatform(t);
  const first = new ApiRestarter(options);
  const orphan = first.start({ argv: [], cwd: root, url });
  started.push(orphan);
  // The dying agent got as far as the spawn: its record holds the spawn id, not yet the pid.
  const startedFile = path.join(platformDir, 'api-started.json');
  const { spawnId } = JSON.parse(fs.readFileSync(startedFile, 'utf8')) as { spawnId: string };
  t.truthy(spawnId);
  fs.writeFileSync(startedFile, JSON.stringify({ spawnId }));

  await nextAgentReplaces(t, { platformDir, url, dead, options, started }, orphan);
});
