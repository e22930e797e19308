/**
 * The container runtime's checks of `svc doctor` (ADR 0219): each finding of the probe the
 * platform's start reads (podman, the OCI runtime, cgroups, rlimits, the registry program) as a
 * check, and whether the offline base images of `scripts/base-images.sh` (ADR 0222) are in podman's
 * storage. Required only when SVC_CONTAINER_RUNTIME=podman (the start then fails without them).
 */
import { execFile } from 'node:child_process';
import { doctorCheck, type DoctorCheck } from '../../domain/doctor/index.js';
import type { SvcConfig } from '../../platform/config.js';
import { BASE_IMAGE_LABEL } from '../../platform/containers/base-image-mirror.js';
import { probeContainerEngine, type EngineProbe } from '../../platform/containers/engine-probe.js';

/** The offline base images `scripts/base-images.sh` builds into podman's storage. */
export const BASE_IMAGES = [
  'docker.io/library/node:20-bookworm-slim',
  'docker.io/library/ruby:3.1-slim-bookworm',
] as const;

const BASE_IMAGES_FIX =
  'bash scripts/base-images.sh (builds them offline; needs mmdebstrap: apt-get install mmdebstrap)';

/** The probe's findings in the order doctor lists them, with the title of one it could not reach. */
const FINDINGS = [
  { id: 'containers.engine', title: 'Container engine (podman)' },
  { id: 'containers.oci-runtime', title: 'OCI runtime' },
  { id: 'containers.cgroups', title: 'cgroups (container memory and CPU limits)' },
  { id: 'containers.rlimits', title: 'Container rlimits within the host hard limits' },
  { id: 'containers.registry', title: 'Image registry program (docker-registry)' },
] as const;

type ContainerSettings = Pick<
  SvcConfig,
  'containerRuntime' | 'containerOciRuntime' | 'containerNofile' | 'containerNproc'
>;

/** The checks of the container runtime: one skipped check when SVC_CONTAINER_RUNTIME=native. */
export async function containerChecks(config: ContainerSettings): Promise<DoctorCheck[]> {
  if (config.containerRuntime === 'native')
    return [
      doctorCheck({
        id: 'containers.engine',
        title: 'Container engine (podman)',
        required: false,
        status: 'skip',
        detail:
          'containers are off by setting (SVC_CONTAINER_RUNTIME=native): every app runs as host processes; not checked',
      }),
    ];
  const required = config.containerRuntime === 'podman';
  const probe = await probeContainerEngine({
    ociRuntime: config.containerOciRuntime,
    nofile: config.containerNofile,
    nproc: config.containerNproc,
  });
  const checks = FINDINGS.map(({ id, title }) => {
    const finding = probe.findings.find((f) => f.id === id);
    if (!finding)
      return doctorCheck({
        id,
        title: id === 'containers.oci-runtime' ? `${title} (${config.containerOciRuntime})` : title,
        required,
        status: 'skip',
        detail: 'not checked: the container engine does not answer (see containers.engine)',
      });
    // A finding that holds but carries a fix (limits capped at the host's) is a warning.
    const status = !finding.ok ? 'fail' : finding.fix !== undefined ? 'warn' : 'pass';
    return doctorCheck({
      id,
      title: finding.title,
      required,
      status,
      detail: finding.detail,
      ...(finding.fix !== undefined ? { fix: finding.fix } : {}),
    });
  });
  if (probe.podmanVersion !== undefined) checks.push(await baseImagesCheck(config, probe));
  return checks;
}

function podman(
  args: readonly string[],
): Promise<{ code: number | string | undefined; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('podman', [...args], { timeout: 20_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? (error.code ?? 'failed') : 0, stdout, stderr: stderr || (error?.message ?? '') }),
    );
  });
}

/**
 * Whether both offline base images are in podman's storage, labelled as `scripts/base-images.sh`
 * builds them (the platform mirrors only labelled images into its registry). Optional: without them
 * the platform runs, but builds `FROM` them fall through to Docker Hub.
 */
async function baseImagesCheck(config: ContainerSettings, probe: EngineProbe): Promise<DoctorCheck> {
  const title = 'offline base images (node:20-bookworm-slim, ruby:3.1-slim-bookworm)';
  // podman refuses every command with a missing runtime: then its default one answers.
  const ociOk = probe.findings.some((f) => f.id === 'containers.oci-runtime' && f.ok);
  const global = ociOk ? ['--runtime', config.containerOciRuntime] : [];
  const states = await Promise.all(
    BASE_IMAGES.map(async (image) => {
      const exists = await podman([...global, 'image', 'exists', image]);
      if (exists.code === 1) return { image, state: 'missing' as const };
      if (exists.code !== 0) return { image, state: 'error' as const, error: exists.stderr.trim().slice(-300) };
      const label = await podman([
        ...global,
        'image',
        'inspect',
        '--format',
        `{{index .Config.Labels "${BASE_IMAGE_LABEL}"}}`,
        image,
      ]);
      return { image, state: label.stdout.trim() === image ? ('present' as const) : ('unlabelled' as const) };
    }),
  );
  const errors = states.filter((s) => s.state === 'error');
  if (errors.length > 0)
    return doctorCheck({
      id: 'containers.base-images',
      title,
      required: false,
      status: 'fail',
      detail: `podman image exists failed: ${errors.map((s) => `${s.image}: ${s.error ?? ''}`).join('; ')}`,
      fix: 'see containers.engine; then bash scripts/base-images.sh if they are missing',
    });
  const missing = states.filter((s) => s.state === 'missing').map((s) => s.image);
  const unlabelled = states.filter((s) => s.state === 'unlabelled').map((s) => s.image);
  const problems = [
    ...(missing.length > 0 ? [`missing from podman's storage: ${missing.join(', ')}`] : []),
    ...(unlabelled.length > 0
      ? [
          `not labelled ${BASE_IMAGE_LABEL} (not built by scripts/base-images.sh, so not mirrored): ${unlabelled.join(', ')}`,
        ]
      : []),
  ];
  return doctorCheck({
    id: 'containers.base-images',
    title,
    required: false,
    status: problems.length === 0 ? 'pass' : 'fail',
    detail:
      problems.length === 0
        ? `${BASE_IMAGES.join(' and ')} present in podman's storage (labelled ${BASE_IMAGE_LABEL})`
        : `${problems.join('; ')}: builds FROM them fall through to Docker Hub (and fail offline)`,
    fix: BASE_IMAGES_FIX,
  });
}
