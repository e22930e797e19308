/**
 * What the container runtime needs on this host, read without starting a container: podman
 * answering `info` (a client and a working engine), the OCI runtime it is told to use, the cgroup
 * layout and its memory controller, the host's hard rlimits (the containers' limits must stay at or
 * below them: without CAP_SYS_RESOURCE a higher one fails every start), and the registry program.
 * Each problem carries its fix; `svc doctor` and the platform's start read the same probe.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';

/** One thing the container runtime needs, and how to fix it when it is missing. */
export interface EngineFinding {
  readonly id: string;
  readonly title: string;
  readonly ok: boolean;
  readonly detail: string;
  readonly fix?: string;
}

/** What the probe read. */
export interface EngineProbe {
  /** True when containers can run here: podman, the OCI runtime and the registry program answer. */
  readonly usable: boolean;
  readonly findings: readonly EngineFinding[];
  readonly podmanVersion?: string;
  readonly ociRuntime?: { readonly name: string; readonly path: string; readonly version: string };
  readonly cgroups?: { readonly version: string; readonly manager: string };
  /** The limits containers get: the configured ones, capped at the host's hard limits. */
  readonly limits: { readonly nofile: number; readonly nproc: number };
}

/** Options of {@link probeContainerEngine}. */
export interface EngineProbeOptions {
  readonly podman?: string;
  readonly ociRuntime: string;
  readonly nofile: number;
  readonly nproc: number;
  readonly registryProgram?: string;
  /** `/proc/self/limits` text. @default read */
  readonly limitsText?: string;
}

function run(file: string, args: readonly string[]): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, [...args], { timeout: 20_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ ok: !error, stdout, stderr: stderr || (error?.message ?? '') }),
    );
  });
}

/** The hard limit of `name` (e.g. `Max open files`) in `/proc/self/limits`; Infinity when unlimited. */
export function hardLimit(limitsText: string, name: string): number | undefined {
  const line = limitsText.split('\n').find((l) => l.startsWith(name));
  if (!line) return undefined;
  const fields = line.slice(name.length).trim().split(/\s+/);
  const hard = fields[1];
  if (hard === undefined) return undefined;
  return hard === 'unlimited' ? Number.POSITIVE_INFINITY : Number(hard);
}

/** Probes podman, the OCI runtime, cgroups, rlimits and the registry program. */
export async function probeContainerEngine(options: EngineProbeOptions): Promise<EngineProbe> {
  const findings: EngineFinding[] = [];
  const podman = options.podman ?? 'podman';
  const limitsText = options.limitsText ?? safeRead('/proc/self/limits');
  const nofileHard = hardLimit(limitsText, 'Max open files') ?? Number.POSITIVE_INFINITY;
  const nprocHard = hardLimit(limitsText, 'Max processes') ?? Number.POSITIVE_INFINITY;
  const limits = { nofile: Math.min(options.nofile, nofileHard), nproc: Math.min(options.nproc, nprocHard) };
  const capped = limits.nofile < options.nofile || limits.nproc < options.nproc;
  findings.push({
    id: 'containers.rlimits',
    title: 'Container rlimits within the host hard limits',
    ok: true,
    detail: `nofile ${limits.nofile}, nproc ${limits.nproc} (host hard limits ${String(nofileHard)}, ${String(nprocHard)})${
      capped ? '; the configured limits were capped at the host hard limits' : ''
    }`,
    ...(capped
      ? {
          fix: 'raise the host hard limits (LimitNOFILE/LimitNPROC of the service) or lower SVC_CONTAINER_NOFILE/NPROC',
        }
      : {}),
  });
  let info = await run(podman, ['--runtime', options.ociRuntime, 'info', '--format', 'json']);
  // podman refuses every command when the runtime it is told to use is missing: asked again with its
  // default runtime, it tells a working engine from a missing runtime.
  const runtimeMissing = !info.ok && /OCI runtime .* not found/i.test(info.stderr);
  if (runtimeMissing) {
    const retry = await run(podman, ['info', '--format', 'json']);
    if (retry.ok) info = retry;
  }
  if (!info.ok) {
    const missing = /\bENOENT\b/.test(info.stderr);
    findings.push({
      id: 'containers.engine',
      title: 'Container engine (podman)',
      ok: false,
      detail: missing ? 'podman is not on the PATH' : `podman info failed: ${info.stderr.trim().slice(-400)}`,
      fix: runtimeMissing
        ? `apt-get install ${options.ociRuntime} (or set SVC_CONTAINER_OCI_RUNTIME)`
        : 'apt-get install podman runc (apps then run in their own images; without it they run as host processes)',
    });
    return { usable: false, findings, limits };
  }
  const parsed = JSON.parse(info.stdout) as {
    version?: { Version?: string };
    host?: {
      cgroupVersion?: string;
      cgroupManager?: string;
      ociRuntime?: { name?: string; path?: string; version?: string };
    };
  };
  const podmanVersion = parsed.version?.Version ?? 'unknown';
  findings.push({
    id: 'containers.engine',
    title: 'Container engine (podman)',
    ok: true,
    detail: `podman ${podmanVersion}`,
  });
  // The runtime podman named is its default one when the configured one is missing.
  const oci = runtimeMissing ? undefined : parsed.host?.ociRuntime;
  const ociOk = oci?.path !== undefined && fs.existsSync(oci.path);
  findings.push({
    id: 'containers.oci-runtime',
    title: `OCI runtime (${options.ociRuntime})`,
    ok: ociOk,
    detail: ociOk ? `${oci.path}: ${(oci.version ?? '').split('\n')[0]}` : `${options.ociRuntime} is not installed`,
    ...(ociOk ? {} : { fix: `apt-get install ${options.ociRuntime} (or set SVC_CONTAINER_OCI_RUNTIME)` }),
  });
  const cgroups = {
    version: parsed.host?.cgroupVersion ?? 'unknown',
    manager: parsed.host?.cgroupManager ?? 'unknown',
  };
  const memory =
    fs.existsSync('/sys/fs/cgroup/memory') || safeRead('/sys/fs/cgroup/cgroup.controllers').includes('memory');
  const hybrid = cgroups.version === 'v1' && fs.existsSync('/sys/fs/cgroup/unified');
  findings.push({
    id: 'containers.cgroups',
    title: 'cgroups (container memory and CPU limits)',
    ok: memory && !(hybrid && options.ociRuntime === 'crun'),
    detail: `cgroup ${cgroups.version}, manager ${cgroups.manager}, memory controller ${memory ? 'present' : 'absent'}${hybrid ? ', hybrid layout' : ''}`,
    ...(!memory
      ? {
          fix: 'enable the memory controller (kernel cgroup_enable=memory); without it container memory limits are not enforced',
        }
      : hybrid && options.ociRuntime === 'crun'
        ? { fix: 'crun refuses hybrid cgroup layouts: set SVC_CONTAINER_OCI_RUNTIME=runc (apt-get install runc)' }
        : {}),
  });
  const registry = await run(options.registryProgram ?? 'docker-registry', ['--version']);
  findings.push({
    id: 'containers.registry',
    title: 'Image registry program (docker-registry)',
    ok: registry.ok,
    detail: registry.ok ? registry.stdout.trim() : 'docker-registry is not on the PATH',
    ...(registry.ok ? {} : { fix: 'apt-get install docker-registry' }),
  });
  return {
    usable: ociOk && registry.ok,
    findings,
    podmanVersion,
    ...(oci?.path
      ? { ociRuntime: { name: oci.name ?? options.ociRuntime, path: oci.path, version: oci.version ?? '' } }
      : {}),
    cgroups,
    limits,
  };
}

function safeRead(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
