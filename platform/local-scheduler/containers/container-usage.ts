/**
 * Resource use of an allocation's container, read from its own cgroup (cgroup v1 or v2, podman's
 * cgroupfs or systemd layout): the kernel enforces the memory limit there, and the podman client
 * that leads the task holds none of the container's processes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { containerIdFile } from './container-runtime.js';

/** Shortest period a CPU sample covers. */
const CPU_SAMPLE_MS = 1000;

/** The folders a container's cgroup can be in, per controller (v1) or unified (v2). */
function cgroupCandidates(root: string, id: string, controller: string, parent?: string): string[] {
  // The allocation's own parent first (it holds the container and its conmon), then podman's defaults.
  const leaves = [
    ...(parent !== undefined ? [parent.replace(/^\//, '')] : []),
    path.join('libpod_parent', `libpod-${id}`),
    path.join('machine.slice', `libpod-${id}.scope`),
  ];
  return [...leaves.map((leaf) => path.join(root, controller, leaf)), ...leaves.map((leaf) => path.join(root, leaf))];
}

function readNumber(file: string): number | undefined {
  try {
    const value = Number(fs.readFileSync(file, 'utf8').trim());
    return Number.isFinite(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function statField(file: string, field: string): number | undefined {
  try {
    const line = fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${field} `));
    return line === undefined ? undefined : Number(line.slice(field.length + 1));
  } catch {
    return undefined;
  }
}

/** Samples one allocation's container. */
export class ContainerUsage {
  readonly #dir: string;
  readonly #root: string;
  readonly #parent: string | undefined;
  #id: string | undefined;
  #memory: { file: string; field: string } | undefined;
  /** The container's `cgroup.procs`, once its cgroup was found. */
  #procs: string | undefined;
  #cpu: { file: string; unitNs: number; field?: string } | undefined;
  #last: { id: string; ns: number; atMs: number } | undefined;

  constructor(allocationDir: string, cgroupRoot = '/sys/fs/cgroup', parent?: string) {
    this.#dir = allocationDir;
    this.#root = cgroupRoot;
    this.#parent = parent;
  }

  /** Forgets the container (a new one starts with a new id). */
  reset(): void {
    this.#id = undefined;
    this.#memory = undefined;
    this.#procs = undefined;
    this.#cpu = undefined;
  }

  #locate(): string | undefined {
    if (this.#id !== undefined && this.#memory !== undefined) return this.#id;
    let id: string;
    try {
      id = fs.readFileSync(containerIdFile(this.#dir), 'utf8').trim();
    } catch {
      return undefined;
    }
    if (!/^[0-9a-f]{64}$/.test(id)) return undefined;
    this.#id = id;
    for (const dir of cgroupCandidates(this.#root, id, 'memory', this.#parent)) {
      if (fs.existsSync(path.join(dir, 'memory.stat'))) {
        // v1 counts the group's resident anonymous memory as total_rss, v2 as anon.
        const v2 = fs.existsSync(path.join(dir, 'memory.current'));
        this.#memory = { file: path.join(dir, 'memory.stat'), field: v2 ? 'anon' : 'total_rss' };
        break;
      }
    }
    for (const dir of cgroupCandidates(this.#root, id, 'cpuacct', this.#parent)) {
      if (fs.existsSync(path.join(dir, 'cpuacct.usage'))) {
        this.#cpu = { file: path.join(dir, 'cpuacct.usage'), unitNs: 1 };
        break;
      }
      if (fs.existsSync(path.join(dir, 'cpu.stat'))) {
        this.#cpu = { file: path.join(dir, 'cpu.stat'), unitNs: 1000, field: 'usage_usec' };
        break;
      }
    }
    // The container's own group, below the allocation's parent (which holds its conmon too).
    const own = this.#parent !== undefined ? path.join(this.#parent, `libpod-${id}`) : undefined;
    for (const dir of cgroupCandidates(this.#root, id, 'memory', own))
      if (fs.existsSync(path.join(dir, 'cgroup.procs'))) {
        this.#procs = path.join(dir, 'cgroup.procs');
        break;
      }
    return this.#memory ? id : undefined;
  }

  /**
   * True once the container's processes are all gone (its cgroup is empty, or removed); false while
   * one runs, or while its cgroup was never found.
   */
  processesGone(): boolean {
    this.#locate();
    if (this.#procs === undefined) return false;
    try {
      return fs.readFileSync(this.#procs, 'utf8').trim() === '';
    } catch {
      return true;
    }
  }

  /** The host pids of the container's processes (empty until its cgroup is found, or once it is gone). */
  processes(): number[] {
    this.#locate();
    if (this.#procs === undefined) return [];
    try {
      return fs
        .readFileSync(this.#procs, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map(Number);
    } catch {
      return [];
    }
  }

  /** Resident memory of the container in bytes; undefined until its cgroup is found. */
  rssBytes(): number | undefined {
    if (this.#locate() === undefined || !this.#memory) return undefined;
    return statField(this.#memory.file, this.#memory.field);
  }

  /** CPU use since the previous sample, at most once a second; undefined when no period ended. */
  cpu(): { percent: number; sampledAt: string } | undefined {
    const id = this.#locate();
    if (id === undefined || !this.#cpu) return undefined;
    const raw = this.#cpu.field ? statField(this.#cpu.file, this.#cpu.field) : readNumber(this.#cpu.file);
    if (raw === undefined) return undefined;
    const ns = raw * this.#cpu.unitNs;
    const now = Date.now();
    const last = this.#last;
    if (last !== undefined && last.id === id && now - last.atMs < CPU_SAMPLE_MS) return undefined;
    this.#last = { id, ns, atMs: now };
    if (last === undefined || last.id !== id) return undefined;
    const percent = Math.max(0, ((ns - last.ns) / 1e6 / (now - last.atMs)) * 100);
    return { percent: Math.round(percent * 10) / 10, sampledAt: new Date(now).toISOString() };
  }
}
