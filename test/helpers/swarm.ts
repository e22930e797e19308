/**
 * A real single-node Docker Swarm for a test file: `dockerd` from Debian's docker.io with its own data
 * root, exec root and socket in a temporary folder (no bridge, no iptables rules: host-mode ports are
 * served by docker-proxy), initialised as a manager on loopback, and torn down with its containers
 * when the file ends. One swarm runs at a time on a host (the swarm's `docker_gwbridge` is host-wide),
 * so the swarm tests live in one file and run serially.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type Docker from 'dockerode';
import { engineAt } from '../../platform/swarm-scheduler/index.js';
import { freePort } from '../routing/wake-harness.js';

/** A running swarm: its engine and `DOCKER_HOST` address. */
export interface TestSwarm {
  readonly engine: Docker;
  readonly host: string;
  readonly dir: string;
  stop(): Promise<void>;
}

/** True when this host has dockerd (Debian's docker.io). */
export function hasDockerd(): boolean {
  return fs.existsSync('/usr/sbin/dockerd');
}

/** Starts dockerd in `dir` and inits a single-node swarm on loopback. */
export async function startSwarm(dir: string): Promise<TestSwarm> {
  fs.mkdirSync(dir, { recursive: true });
  const socket = path.join(dir, 'docker.sock');
  const log = fs.openSync(path.join(dir, 'dockerd.log'), 'a');
  const daemon = spawn(
    '/usr/sbin/dockerd',
    [
      '--data-root',
      path.join(dir, 'data'),
      '--exec-root',
      path.join(dir, 'exec'),
      '--pidfile',
      path.join(dir, 'dockerd.pid'),
      '--host',
      `unix://${socket}`,
      '--bridge',
      'none',
      '--iptables=false',
      '--ip-masq=false',
    ],
    { stdio: ['ignore', log, log] },
  );
  fs.closeSync(log);
  const exited = new Promise<void>((resolve) => daemon.once('exit', () => resolve()));
  const host = `unix://${socket}`;
  const engine = engineAt(host);
  // dockerd logs "API listen on <socket>" once it serves its API.
  const logFile = path.join(dir, 'dockerd.log');
  const serving = () => fs.readFileSync(logFile, 'utf8').includes('API listen on');
  await new Promise<void>((resolve, reject) => {
    const watcher = fs.watch(logFile, () => {
      if (serving()) done();
    });
    const timer = setTimeout(() => done(new Error('it did not serve its API within 60 s')), 60_000);
    const onExit = () => done(new Error(`it exited with ${daemon.exitCode}`));
    daemon.once('exit', onExit);
    function done(error?: Error) {
      watcher.close();
      clearTimeout(timer);
      daemon.off('exit', onExit);
      if (error)
        reject(new Error(`dockerd did not start (${error.message}): ${fs.readFileSync(logFile, 'utf8').slice(-2000)}`));
      else resolve();
    }
    if (serving()) done();
  });
  await engine.ping();
  const port = await freePort();
  await engine.swarmInit({ ListenAddr: `127.0.0.1:${port}`, AdvertiseAddr: `127.0.0.1:${port}` });
  return {
    engine,
    host,
    dir,
    async stop() {
      await engine.swarmLeave({ force: true }).catch(() => undefined);
      daemon.kill('SIGTERM');
      await exited;
      // Mounts dockerd left under its roots (a killed daemon's) would keep the folder from going.
      spawnSync('sh', ['-c', `grep -o " ${dir}[^ ]*" /proc/self/mounts | sort -r | xargs -r -n1 umount -l`]);
      // The swarm's host-wide bridge outlives its daemon; the next swarm makes its own.
      spawnSync('ip', ['link', 'delete', 'docker_gwbridge']);
    },
  };
}

/** Pushes `image` from podman's storage to the registry at `registryHost` as `name`; its reference by digest. */
export function pushByDigest(image: string, registryHost: string, name: string, dir: string): string {
  const digestFile = path.join(dir, `${name}.digest`);
  const pushed = spawnSync(
    'podman',
    ['push', '--quiet', '--tls-verify=false', '--digestfile', digestFile, image, `${registryHost}/${name}:latest`],
    { encoding: 'utf8' },
  );
  if (pushed.status !== 0) throw new Error(`podman push failed: ${pushed.stderr}`);
  return `${registryHost}/${name}@${fs.readFileSync(digestFile, 'utf8').trim()}`;
}
