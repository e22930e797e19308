/**
 * The parent cgroup of one allocation's container (`--cgroup-parent`, podman's cgroupfs manager):
 * it outlives the container, so after an exit the driver can still read whether the container
 * reached its memory limit. The runtime's own OOM flag is not set on every host: on a cgroup v1 host
 * with runc, podman 4.3 reports `OOMKilled: false` for a container the kernel killed at its limit.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Controllers podman creates the parent in (v1); v2 has one unified folder. */
const V1_CONTROLLERS = ['memory', 'cpu', 'cpuacct', 'cpuset', 'pids', 'blkio', 'devices', 'freezer', 'systemd'];

/** The `--cgroup-parent` of an allocation under `root` (e.g. `/svc-allocs`). */
export function cgroupParent(root: string, allocationId: string): string {
  return `${root}/${allocationId}`;
}

/** The parent's folders under the cgroup mount, the memory one first. */
function folders(mount: string, parent: string): string[] {
  if (fs.existsSync(path.join(mount, 'cgroup.controllers'))) return [path.join(mount, parent)];
  return V1_CONTROLLERS.map((c) => path.join(mount, c === 'systemd' ? 'systemd' : c, parent));
}

function read(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** Forgets the parent's memory peak (v1) before a start, so that the next reading is this run's. */
export function resetMemoryPeak(mount: string, parent: string): void {
  const peak = path.join(folders(mount, parent)[0]!, 'memory.max_usage_in_bytes');
  try {
    if (fs.existsSync(peak)) fs.writeFileSync(peak, '0');
  } catch {
    // A peak that cannot be reset reads high: the exit is still judged by its code.
  }
}

/** The count of OOM kills under the parent (v2), or the memory peak in bytes (v1); undefined when unreadable. */
export function memoryReading(mount: string, parent: string): { oomKills?: number; peakBytes?: number } {
  const dir = folders(mount, parent)[0]!;
  const events = read(path.join(dir, 'memory.events'));
  if (events !== undefined) {
    const line = events.split('\n').find((l) => l.startsWith('oom_kill '));
    return line ? { oomKills: Number(line.slice('oom_kill '.length)) } : {};
  }
  const peak = read(path.join(dir, 'memory.max_usage_in_bytes'));
  return peak !== undefined ? { peakBytes: Number(peak.trim()) } : {};
}

/** Removes the parent's folders (deepest first); folders still in use stay. */
export function removeCgroupParent(mount: string, parent: string): void {
  for (const dir of folders(mount, parent)) {
    if (!fs.existsSync(dir)) continue;
    const walk = (d: string): void => {
      for (const entry of fs.readdirSync(d, { withFileTypes: true }))
        if (entry.isDirectory()) walk(path.join(d, entry.name));
      try {
        fs.rmdirSync(d);
      } catch {
        // Still in use (a process left in it): the next start reuses it.
      }
    };
    walk(dir);
  }
}
