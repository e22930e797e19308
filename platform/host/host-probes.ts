/**
 * Probes of the host `svc doctor` reports on: programs on the PATH, free ports, free disk, cgroup
 * controllers and clock synchronization. Each answers a plain fact and never changes the host.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Runs `program args` (PATH lookup); its first output line, or undefined when it is missing or fails. */
export async function programVersion(
  program: string,
  args: readonly string[] = ['--version'],
): Promise<string | undefined> {
  try {
    const { stdout, stderr } = await run(program, [...args], { timeout: 10_000 });
    return (stdout || stderr).trim().split('\n')[0];
  } catch {
    return undefined;
  }
}

/** Whether `port` on `host` can be bound now; `in-use` when another listener holds it. */
export function probePort(host: string, port: number): Promise<'free' | 'in-use' | 'denied'> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'EADDRINUSE' ? 'in-use' : 'denied'));
    server.listen(port, host, () => server.close(() => resolve('free')));
  });
}

/** True when GET `url` answers 2xx within a second. */
export async function answers(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
    return response.ok;
  } catch {
    return false;
  }
}

/** The nearest existing folder at or above `dir`. */
export function nearestExisting(dir: string): string {
  let current = path.resolve(dir);
  while (!fs.existsSync(current) && path.dirname(current) !== current) current = path.dirname(current);
  return current;
}

/** Free bytes for an unprivileged user on the file system holding `dir` (or its nearest existing parent). */
export function freeDiskBytes(dir: string): number {
  const stats = fs.statfsSync(nearestExisting(dir));
  return stats.bavail * stats.bsize;
}

/** Free memory, and free and total disk of the file system holding `dir`: what the capacity check samples. */
export async function hostCapacitySample(
  dir: string,
): Promise<{ freeMemoryBytes: number; freeDiskBytes: number; totalDiskBytes: number }> {
  const stats = await fs.promises.statfs(dir);
  return {
    freeMemoryBytes: os.freemem(),
    freeDiskBytes: Number(stats.bavail) * Number(stats.bsize),
    totalDiskBytes: Number(stats.blocks) * Number(stats.bsize),
  };
}

/** Size and free bytes (for an unprivileged user) of the file system holding `dir` (or its nearest existing parent). */
export function diskUsage(dir: string): { totalBytes: number; freeBytes: number } {
  const stats = fs.statfsSync(nearestExisting(dir));
  return { totalBytes: stats.blocks * stats.bsize, freeBytes: stats.bavail * stats.bsize };
}

/** True when this process may write in `dir`. */
export function writable(dir: string): boolean {
  try {
    fs.accessSync(dir, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** How the cgroup controller `name` (`cpu` or `memory`) can be used under `root`, as the local driver would. */
export function cgroupController(
  name: 'cpu' | 'memory',
  root = '/sys/fs/cgroup',
): { kind: 'cgroup-v2' | 'cgroup-v1'; writable: boolean } | undefined {
  try {
    const controllers = fs.readFileSync(path.join(root, 'cgroup.controllers'), 'utf8').split(/\s+/);
    if (controllers.includes(name))
      return { kind: 'cgroup-v2', writable: writable(path.join(root, 'cgroup.subtree_control')) };
  } catch {
    // Not a v2 root.
  }
  const v1 = path.join(root, name);
  const file = path.join(v1, name === 'cpu' ? 'cpu.shares' : 'memory.limit_in_bytes');
  if (fs.existsSync(file)) return { kind: 'cgroup-v1', writable: writable(v1) };
  return undefined;
}

/** `timedatectl`'s NTP synchronization flag; undefined when timedatectl is absent or cannot answer (no systemd). */
export async function ntpSynchronized(): Promise<boolean | undefined> {
  const answer = await programVersion('timedatectl', ['show', '--property=NTPSynchronized', '--value']);
  if (answer === 'yes') return true;
  if (answer === 'no') return false;
  return undefined;
}
