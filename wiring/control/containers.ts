/**
 * The container runtime of the local driver (ADR 0219): probed at start; where podman answers (or
 * SVC_CONTAINER_RUNTIME=podman requires it) the managed registry is started, the platform's
 * registries.conf written, the offline base images mirrored, and the image builder and the
 * driver's runtime handed to the pipeline and the scheduler. Otherwise apps run as host processes,
 * and the log says why.
 */
import { UnavailableError } from '../../domain/errors.js';
import type { SvcConfig } from '../../platform/config.js';
import type { Logger } from '../../platform/logger.js';
import { mirrorBaseImages } from '../../platform/containers/base-image-mirror.js';
import { writeRegistriesConf } from '../../platform/containers/containers-config.js';
import { probeContainerEngine, type EngineProbe } from '../../platform/containers/engine-probe.js';
import { ImageBuilder } from '../../platform/containers/image-builder.js';
import { ManagedRegistry } from '../../platform/containers/managed-registry.js';
import { Podman } from '../../platform/containers/podman.js';
import {
  ensureImageSigningKey,
  writeImageSignatureConfig,
  type ImageSignatureConfig,
  type ImageSigningKey,
} from '../../platform/containers/image-signature.js';
import { APP_LABEL, type ContainerRuntime } from '../../platform/local-scheduler/containers/container-runtime.js';

/** Root of the per-allocation parent cgroups of app containers. */
export const CGROUP_PARENT_ROOT = '/svc-allocs';

/** The started container runtime, or why there is none. */
export interface ContainerWiring {
  readonly runtime?: ContainerRuntime;
  readonly images?: ImageBuilder;
  readonly registry?: ManagedRegistry;
  readonly probe?: EngineProbe;
  /** Why apps run as host processes (no runtime). */
  readonly reason?: string;
  /** Resolves once the base images are mirrored into the registry. */
  readonly mirrored: Promise<void>;
  close(): Promise<void>;
  /** Leaves the registry running for the next start to adopt (an API restart). */
  release(): void;
  /** Removes a retired app's containers (any left) and its images from the registry and the engine. */
  removeApp(app: string): Promise<number>;
}

/** Starts the container runtime where the configuration and the host allow it. */
export async function startContainers(
  config: Pick<
    SvcConfig,
    | 'containerRuntime'
    | 'containerOciRuntime'
    | 'containerNetwork'
    | 'containerPrepare'
    | 'containerNofile'
    | 'containerNproc'
    | 'registryPort'
    | 'imageTrustedKeys'
    | 'registryMirror'
    | 'schedulerDriver'
  >,
  dataDir: string,
  logger: Logger,
): Promise<ContainerWiring> {
  const log = logger.child({ component: 'containers' });
  const none = (reason: string, probe?: EngineProbe): ContainerWiring => ({
    reason,
    ...(probe ? { probe } : {}),
    mirrored: Promise.resolve(),
    close: () => Promise.resolve(),
    release: () => undefined,
    removeApp: () => Promise.resolve(0),
  });
  if (config.containerRuntime === 'native') return none('SVC_CONTAINER_RUNTIME=native');
  const probe = await probeContainerEngine({
    ociRuntime: config.containerOciRuntime,
    nofile: config.containerNofile,
    nproc: config.containerNproc,
  });
  if (!probe.usable) {
    const problems = probe.findings.filter((f) => !f.ok);
    const reason = problems.map((f) => `${f.detail}${f.fix ? ` (fix: ${f.fix})` : ''}`).join('; ');
    if (config.containerRuntime === 'podman')
      throw new UnavailableError(`SVC_CONTAINER_RUNTIME=podman, but containers cannot run here: ${reason}`, {
        code: 'container_runtime_unavailable',
      });
    log.warn({ reason }, 'containers are off: apps run as host processes (see `svc doctor`)');
    return none(reason, probe);
  }
  const registry = await ManagedRegistry.open({ dataDir, logger: log, port: config.registryPort });
  const registriesConf = writeRegistriesConf(dataDir, registry.host);
  const podman = new Podman({ runtime: config.containerOciRuntime, registriesConf });
  // Every image the platform pushes is signed with its own key; production deploys verify (ADR 0223).
  let signing: { config: ImageSignatureConfig; key: ImageSigningKey };
  try {
    const key = await ensureImageSigningKey(dataDir);
    if (key.outcome === 'created') log.info({ fingerprint: key.fingerprint }, 'image-signing key created');
    signing = {
      key,
      config: await writeImageSignatureConfig({
        dataDir,
        registryHost: registry.host,
        registriesConf,
        signingKey: key,
        extraTrustedKeyPaths: config.imageTrustedKeys,
      }),
    };
  } catch (error) {
    await registry.close();
    throw error;
  }
  // Other drivers run the pushed images themselves (by digest); the local driver runs them with podman.
  const runtime: ContainerRuntime | undefined =
    config.schedulerDriver === 'local'
      ? {
          podman,
          network: config.containerNetwork,
          limits: probe.limits,
          prepareAhead: config.containerPrepare,
          // Per-allocation parent cgroups need podman's cgroupfs manager (systemd wants slices).
          ...(probe.cgroups?.manager === 'cgroupfs' ? { cgroupParentRoot: CGROUP_PARENT_ROOT } : {}),
        }
      : undefined;
  const images = new ImageBuilder({ podman, registryHost: registry.host, signing });
  const mirrored = (config.registryMirror ? mirrorBaseImages(podman, registry.host) : Promise.resolve([])).then(
    (done) => {
      const pushed = done.filter((d) => d.outcome === 'pushed').map((d) => d.reference);
      const failed = done.filter((d) => d.outcome === 'failed');
      if (pushed.length > 0) log.info({ pushed }, 'base images mirrored into the managed registry');
      for (const f of failed) log.warn({ image: f.reference, error: f.error }, 'base image not mirrored');
    },
    (error: unknown) => log.warn({ err: error }, 'base images not mirrored'),
  );
  log.info(
    {
      podman: probe.podmanVersion,
      ociRuntime: probe.ociRuntime?.name,
      registry: registry.host,
      network: runtime?.network,
    },
    runtime
      ? 'containers on: Dockerfile and build.image releases run as podman containers'
      : 'images on: Dockerfiles are built into images in the managed registry',
  );
  return {
    ...(runtime ? { runtime } : {}),
    images,
    registry,
    probe,
    mirrored,
    close: async () => {
      await mirrored;
      await registry.close();
    },
    release: () => registry.release(),
    removeApp: async (app) => {
      const left = await podman.run(['ps', '--all', '--quiet', '--filter', `label=${APP_LABEL}=${app}`]);
      const ids = left.stdout.split('\n').filter(Boolean);
      if (ids.length > 0) await podman.run(['rm', '--force', '--time', '0', ...ids]);
      return images.removeApp(app);
    },
  };
}
