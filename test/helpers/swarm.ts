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
  /** The manager node's address: tasks on it are reached there. */
  readonly address: string;
  /** The link a worker joins over, or why there is none. */
  readonly link: { readonly ok: true; readonly netns: string } | { readonly ok: false; readonly reason: string };
  stop(): Promise<void>;
}

/** True when this host has dockerd (Debian's docker.io). */
export function hasDockerd(): boolean {
  return fs.existsSync('/usr/sbin/dockerd');
}

/**
 * The addresses of the link between this host and a worker's network namespace: a veth pair, the
 * host's end the manager's address, the other end the worker's.
 */
export const LINK = {
  netns: 'svc-swarm-worker',
  hostEnd: 'svcsw0',
  workerEnd: 'svcsw1',
  host: '10.77.0.1',
  worker: '10.77.0.2',
};

function ip(args: string[], netns?: string): string | undefined {
  const result = spawnSync('ip', netns === undefined ? args : ['-n', netns, ...args], { encoding: 'utf8' });
  return result.status === 0 ? undefined : `ip ${args.join(' ')}: ${result.stderr.trim() || `exit ${result.status}`}`;
}

/** Makes the worker's network namespace and the veth pair to it; the reason when the host refuses. */
function makeLink(): string | undefined {
  removeLink();
  return (
    ip(['netns', 'add', LINK.netns]) ??
    ip(['link', 'add', LINK.hostEnd, 'type', 'veth', 'peer', 'name', LINK.workerEnd]) ??
    ip(['link', 'set', LINK.workerEnd, 'netns', LINK.netns]) ??
    ip(['addr', 'add', `${LINK.host}/30`, 'dev', LINK.hostEnd]) ??
    ip(['link', 'set', LINK.hostEnd, 'up']) ??
    ip(['addr', 'add', `${LINK.worker}/30`, 'dev', LINK.workerEnd], LINK.netns) ??
    ip(['link', 'set', LINK.workerEnd, 'up'], LINK.netns) ??
    ip(['link', 'set', 'lo', 'up'], LINK.netns)
  );
}

function removeLink(): void {
  ip(['link', 'delete', LINK.hostEnd]);
  ip(['netns', 'delete', LINK.netns]);
}

interface Daemon {
  readonly engine: Docker;
  readonly host: string;
  stop(): Promise<void>;
}

/**
 * Starts dockerd with its roots and socket in `dir`, in the network namespace `netns` when given
 * (entered with `nsenter --net`: `ip netns exec` mounts a fresh /sys, which hides the cgroup mounts
 * dockerd needs). Plain-HTTP pulls from the link's addresses are allowed (the test's registry).
 */
async function startDockerd(dir: string, netns?: string): Promise<Daemon> {
  fs.mkdirSync(dir, { recursive: true });
  const socket = path.join(dir, 'docker.sock');
  const log = fs.openSync(path.join(dir, 'dockerd.log'), 'a');
  const argv = [
    '/usr/sbin/dockerd',
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
    '--insecure-registry',
    `${LINK.host}/30`,
  ];
  const daemon =
    netns === undefined
      ? spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', log, log] })
      : spawn('nsenter', [`--net=/var/run/netns/${netns}`, ...argv], { stdio: ['ignore', log, log] });
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
  return {
    engine,
    host,
    async stop() {
      await engine.swarmLeave({ force: true }).catch(() => undefined);
      daemon.kill('SIGTERM');
      await exited;
      // Mounts dockerd left under its roots (a killed daemon's) would keep the folder from going.
      spawnSync('sh', ['-c', `grep -o " ${dir}[^ ]*" /proc/self/mounts | sort -r | xargs -r -n1 umount -l`]);
    },
  };
}

/**
 * Starts dockerd in `dir` and inits a single-node swarm. The manager listens on the host's end of a
 * link to a network namespace a worker can join from ({@link startWorker}); where the host cannot make
 * one, on loopback.
 */
export async function startSwarm(dir: string): Promise<TestSwarm> {
  const refused = makeLink();
  const daemon = await startDockerd(dir);
  const address = refused === undefined ? LINK.host : '127.0.0.1';
  const port = await freePort();
  await daemon.engine.swarmInit({ ListenAddr: `${address}:${port}`, AdvertiseAddr: `${address}:${port}` });
  return {
    engine: daemon.engine,
    host: daemon.host,
    dir,
    address,
    link: refused === undefined ? { ok: true, netns: LINK.netns } : { ok: false, reason: refused },
    async stop() {
      await daemon.stop();
      // The swarm's host-wide bridge outlives its daemon; the next swarm makes its own.
      spawnSync('ip', ['link', 'delete', 'docker_gwbridge']);
      removeLink();
    },
  };
}

/** A second dockerd, in the link's network namespace, joined to `swarm` as a worker. */
export async function startWorker(swarm: TestSwarm, dir: string): Promise<Daemon & { readonly nodeId: string }> {
  if (!swarm.link.ok) throw new Error(`no worker can join: ${swarm.link.reason}`);
  const daemon = await startDockerd(dir, swarm.link.netns);
  const inspect = (await swarm.engine.swarmInspect()) as { JoinTokens: { Worker: string } };
  const info = (await swarm.engine.info()) as { Swarm: { RemoteManagers: { Addr: string }[] } };
  await daemon.engine.swarmJoin({
    ListenAddr: `${LINK.worker}:2377`,
    AdvertiseAddr: `${LINK.worker}:2377`,
    RemoteAddrs: [info.Swarm.RemoteManagers[0]!.Addr],
    JoinToken: inspect.JoinTokens.Worker,
  });
  const nodeId = ((await daemon.engine.info()) as { Swarm: { NodeID: string } }).Swarm.NodeID;
  return {
    ...daemon,
    nodeId,
    async stop() {
      await daemon.stop();
      await swarm.engine
        .getNode(nodeId)
        .remove({ force: true })
        .catch(() => undefined);
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
