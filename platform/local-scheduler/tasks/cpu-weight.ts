/**
 * CPU weight of app processes: each allocation's process tree is put in its own cgroup whose CPU
 * weight follows `resources.cpu` (MHz), so under contention processes share the CPU in proportion
 * to what their specs declare (a soft limit, as Nomad's default: an idle host lets anyone burst).
 * cgroup v2 (`cpu.weight`, when the cpu controller is enabled at the root) or the v1 cpu hierarchy
 * (`cpu.shares`) are used when writable; otherwise weights are not applied and the driver says so
 * once at start.
 */
import fs from 'node:fs';
import path from 'node:path';

/** How CPU weights are applied on this host. */
export interface CpuWeights {
  /** `cgroup-v2`, `cgroup-v1`, or `none` (not applied). */
  readonly kind: 'cgroup-v2' | 'cgroup-v1' | 'none';
  /** Why weights are not applied (kind `none`). */
  readonly reason?: string;
  /** Puts process `pid` (and its future children) under the weight of `cpuMhz`; returns the cgroup path, or undefined when not applied. */
  place(allocationId: string, pid: number, cpuMhz: number): string | undefined;
  /**
   * Where a process joins the weight of `cpuMhz` by itself (the task spawner's child, before it
   * execs): the group folder to create, the weight file and its value; undefined when not applied.
   */
  target(allocationId: string, cpuMhz: number): CpuWeightTarget | undefined;
  /** Removes the allocation's cgroup once its processes are gone (best effort). */
  release(allocationId: string): void;
}

/** An allocation's cgroup and the weight to write in it. */
export interface CpuWeightTarget {
  readonly group: string;
  readonly file: string;
  readonly value: string;
}

/** `cpu.shares` for a CPU in MHz: 1 MHz is one share, 1,024 (a v1 group's default) is about one 1 GHz core's claim. */
export function cpuShares(cpuMhz: number): number {
  return Math.min(262_144, Math.max(2, Math.round(cpuMhz)));
}

/** `cpu.weight` (v2, 1-10,000, default 100) for a CPU in MHz, the same proportion as {@link cpuShares}. */
export function cpuWeight(cpuMhz: number): number {
  return Math.min(10_000, Math.max(1, Math.round((cpuShares(cpuMhz) * 100) / 1024)));
}

const GROUP = 'svc-apps';

/** CPU weights turned off. */
export const NO_CPU_WEIGHTS: CpuWeights = {
  kind: 'none',
  reason: 'turned off',
  place: () => undefined,
  target: () => undefined,
  release: () => undefined,
};

function writable(dir: string): boolean {
  try {
    fs.accessSync(dir, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

function controller(
  dir: string,
  file: string,
  value: (cpuMhz: number) => number,
): Pick<CpuWeights, 'place' | 'target'> {
  return {
    place: (allocationId, pid, cpuMhz) => {
      const group = path.join(dir, allocationId);
      fs.mkdirSync(group, { recursive: true });
      fs.writeFileSync(path.join(group, file), String(value(cpuMhz)));
      fs.writeFileSync(path.join(group, 'cgroup.procs'), String(pid));
      return group;
    },
    target: (allocationId, cpuMhz) => ({ group: path.join(dir, allocationId), file, value: String(value(cpuMhz)) }),
  };
}

/**
 * Removes an allocation's group once its last process is gone: the kernel refuses (EBUSY) while a
 * process of the stopped tree has not been reaped yet, so it tries again, `attempts` times, 100 ms apart.
 */
function removeWhenEmpty(group: string, attempts: number): void {
  try {
    fs.rmdirSync(group);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EBUSY' && attempts > 1)
      setTimeout(() => removeWhenEmpty(group, attempts - 1), 100).unref();
    // Otherwise gone already, or a re-adopted tree still runs in it: the next start sweeps it.
  }
}

/** Removes empty allocation groups left by an earlier driver (older than a minute, so none being set up now). */
function sweepStale(dir: string): void {
  const cutoff = Date.now() - 60_000;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const group = path.join(dir, entry.name);
    try {
      if (fs.statSync(group).mtimeMs < cutoff) fs.rmdirSync(group);
    } catch {
      // Busy (its processes still run) or gone.
    }
  }
}

/** Who is asking, for {@link detectCpuWeights}; the defaults are this process. */
export interface CpuWeightsProcess {
  /** @default process.getuid() */
  readonly uid?: number;
  /** @default process.pid */
  readonly pid?: number;
  /** Text of `/proc/self/cgroup`. @default read from /proc */
  readonly cgroup?: string;
}

/**
 * The cgroup v2 group systemd delegated to this process (a unit with `User=` and `Delegate=yes`,
 * as `svc install` writes, ADR 0141): the process's own group, owned by its (non-root) user, with
 * the cpu controller available. Undefined when there is none.
 */
function delegatedGroup(root: string, who: CpuWeightsProcess): string | undefined {
  const uid = who.uid ?? process.getuid?.() ?? 0;
  if (uid === 0) return undefined;
  let text = who.cgroup;
  try {
    text ??= fs.readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    return undefined;
  }
  const own = /^0::(\/.+)$/m.exec(text)?.[1];
  if (!own || own === '/') return undefined;
  const dir = path.join(root, own);
  try {
    if (fs.statSync(dir).uid !== uid || !writable(dir)) return undefined;
    return fs.readFileSync(path.join(dir, 'cgroup.controllers'), 'utf8').split(/\s+/).includes('cpu') ? dir : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Detects how CPU weights can be applied under `root` (the cgroup mount): the root's cpu controller
 * when this process may write it (root), else, under cgroup v2, the group systemd delegated to the
 * service. There, the process first moves itself into a leaf (`supervisor`), because a group that
 * gives controllers to its children may hold no process itself.
 */
export function detectCpuWeights(root = '/sys/fs/cgroup', who: CpuWeightsProcess = {}): CpuWeights {
  const release = (dir: string) => (allocationId: string) => removeWhenEmpty(path.join(dir, allocationId), 20);
  const v2 = (base: string): CpuWeights => {
    const dir = path.join(base, GROUP);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'cgroup.subtree_control'), '+cpu');
    sweepStale(dir);
    return { kind: 'cgroup-v2', ...controller(dir, 'cpu.weight', cpuWeight), release: release(dir) };
  };
  try {
    const delegated = delegatedGroup(root, who);
    if (delegated) {
      const supervisor = path.join(delegated, 'supervisor');
      fs.mkdirSync(supervisor, { recursive: true });
      fs.writeFileSync(path.join(supervisor, 'cgroup.procs'), String(who.pid ?? process.pid));
      fs.writeFileSync(path.join(delegated, 'cgroup.subtree_control'), '+cpu');
      return v2(delegated);
    }
    const controllers = fs.readFileSync(path.join(root, 'cgroup.controllers'), 'utf8').split(/\s+/);
    if (controllers.includes('cpu') && writable(root)) return v2(root);
  } catch {
    // Not a v2 root, or the cpu controller cannot be delegated: try v1.
  }
  const v1 = path.join(root, 'cpu');
  try {
    if (fs.existsSync(path.join(v1, 'cpu.shares')) && writable(v1)) {
      const dir = path.join(v1, GROUP);
      fs.mkdirSync(dir, { recursive: true });
      sweepStale(dir);
      return { kind: 'cgroup-v1', ...controller(dir, 'cpu.shares', cpuShares), release: release(dir) };
    }
  } catch {
    // Fall through.
  }
  return {
    kind: 'none',
    reason: `no writable cgroup cpu controller under ${root} (run as root with cgroups mounted, or as a systemd service with Delegate=yes on cgroup v2, to apply resources.cpu)`,
    place: () => undefined,
    target: () => undefined,
    release: () => undefined,
  };
}
