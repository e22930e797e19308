/**
 * Builds an app's Dockerfile into an OCI image with podman at the deployed commit and pushes it to
 * the managed registry (ADR 0219): the real `FROM` (docker.io resolved through the registry's
 * mirror first), every stage and `RUN` step in the image, build args, the revision label, and
 * podman's layer cache between deploys, so a change to app code alone re-runs no dependency layer.
 * The release names the pushed image by digest.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BuildError } from '../errors.js';
import type { Podman } from './podman.js';
import {
  IMAGE_REVISION_LABEL,
  pushSignedImage,
  verifyImageSignature,
  type ImageSignatureConfig,
  type ImageSigningKey,
} from './image-signature.js';

/** What to build. */
export interface ImageBuildRequest {
  readonly app: string;
  /** Full commit sha. */
  readonly commit: string;
  /** The build context: the app's files at the commit. */
  readonly contextDir: string;
  /** Absolute path of the Dockerfile. */
  readonly dockerfile: string;
  readonly buildArgs: Readonly<Record<string, string>>;
  /** Each line of build output, as it comes (progress for long builds). */
  readonly onLine?: (line: string) => void;
}

/** The configuration an image runs with, as its build recorded it. */
export interface ImageConfig {
  readonly entrypoint: readonly string[] | null;
  readonly cmd: readonly string[] | null;
  readonly env: Readonly<Record<string, string>>;
  readonly workdir: string | null;
  readonly user: string | null;
  readonly exposedPorts: readonly string[];
  readonly labels: Readonly<Record<string, string>>;
}

/** A built and pushed image. */
export interface BuiltImage {
  /** `<registry>/<app>:<sha>`. */
  readonly tag: string;
  /** `<registry>/<app>@sha256:<digest>`: what the release runs. */
  readonly image: string;
  readonly digest: string;
  readonly config: ImageConfig;
}

/** Options of {@link ImageBuilder}. */
export interface ImageBuilderOptions {
  readonly podman: Podman;
  /** `127.0.0.1:<port>` of the managed registry. */
  readonly registryHost: string;
  /** Signs every pushed image with the platform's key and verifies images by it (ADR 0223); undefined: unsigned. */
  readonly signing?: { readonly config: ImageSignatureConfig; readonly key: ImageSigningKey };
  /** Longest build. @default 30 minutes */
  readonly buildTimeoutMs?: number;
}

/** Builds, pushes and inspects app images. */
export class ImageBuilder {
  readonly #options: ImageBuilderOptions;

  constructor(options: ImageBuilderOptions) {
    this.#options = options;
  }

  /** The managed registry's `host:port`. */
  get registryHost(): string {
    return this.#options.registryHost;
  }

  /** Builds `request` into `<registry>/<app>:<sha>`, pushes it, and returns it by digest. */
  async build(request: ImageBuildRequest): Promise<BuiltImage> {
    const podman = this.#options.podman;
    const tag = `${this.#options.registryHost}/${request.app}:${request.commit}`;
    const args = [
      'build',
      '--layers',
      '--pull=missing',
      '--label',
      `${IMAGE_REVISION_LABEL}=${request.commit}`,
      '--label',
      `io.svc.app=${request.app}`,
      '--tag',
      tag,
      '--file',
      request.dockerfile,
    ];
    for (const [key, value] of Object.entries(request.buildArgs)) args.push('--build-arg', `${key}=${value}`);
    args.push(request.contextDir);
    const built = await podman.stream(
      args,
      (line) => request.onLine?.(line),
      this.#options.buildTimeoutMs ?? 30 * 60_000,
    );
    if (!built.ok) {
      const output = `${built.stdout}${built.stderr}`.slice(-4000);
      const missingBase =
        /initializing source docker:\/\/|pinging container registry|manifest unknown|name unknown/i.test(output);
      throw new BuildError(
        `podman build of ${request.app}@${request.commit.slice(0, 12)} failed${
          missingBase
            ? ': a FROM image could not be pulled (offline hosts: run scripts/base-images.sh to build the base images the registry mirrors)'
            : ''
        }:\n${output}`,
        { engine: 'podman', tag, output },
      );
    }
    const digest = await this.#push(tag);
    const image = `${this.#options.registryHost}/${request.app}@${digest}`;
    // Known locally by its digest too: the first start reads no layer from the registry.
    await podman.check(`pull of ${image}`, ['pull', '--quiet', image], { timeoutMs: 10 * 60_000 });
    return { tag, image, digest, config: await this.inspect(tag) };
  }

  /** Pushes `tag` to the managed registry, signed when signing is on; returns the manifest digest. */
  async #push(tag: string): Promise<string> {
    const signing = this.#options.signing;
    if (signing) {
      const pushed = await pushSignedImage({
        config: signing.config,
        signingKey: signing.key,
        source: tag,
        destination: tag,
      });
      return pushed.digest;
    }
    const digestFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-push-')), 'digest');
    try {
      const pushed = await this.#options.podman.run(['push', '--digestfile', digestFile, tag], {
        timeoutMs: 10 * 60_000,
      });
      if (!pushed.ok)
        throw new BuildError(
          `push of ${tag} to the managed registry failed: ${`${pushed.stdout}${pushed.stderr}`.slice(-2000)}`,
          { engine: 'podman', tag },
        );
      const digest = fs.readFileSync(digestFile, 'utf8').trim();
      if (!/^sha256:[0-9a-f]{64}$/.test(digest))
        throw new BuildError(`push of ${tag} reported no digest`, { engine: 'podman', tag });
      return digest;
    } finally {
      fs.rmSync(path.dirname(digestFile), { recursive: true, force: true });
    }
  }

  /**
   * Removes images (`<registry>/<app>@sha256:…`) from the managed registry (their manifests; the
   * registry's garbage collection at its next start frees their layers) and from the engine's
   * storage, with their `<app>:<sha>` tags; images of other registries are left alone. Resolves with
   * how many were removed.
   */
  async remove(images: readonly string[]): Promise<number> {
    let removed = 0;
    for (const image of images) {
      const match = /^([^/]+)\/(.+)@(sha256:[0-9a-f]{64})$/.exec(image);
      if (!match || match[1] !== this.#options.registryHost) continue;
      const [, host, repository, digest] = match;
      const response = await fetch(`http://${host}/v2/${repository}/manifests/${digest}`, { method: 'DELETE' }).catch(
        () => undefined,
      );
      await response?.arrayBuffer();
      const local = await this.#options.podman.run(['image', 'inspect', '--format', '{{.Id}}', image]);
      if (local.ok) await this.#options.podman.run(['rmi', '--force', local.stdout.trim()]);
      if (response?.status === 202 || local.ok) removed += 1;
    }
    return removed;
  }

  /** Removes every image of `app` from the managed registry and the engine's storage (a retired app). */
  async removeApp(app: string): Promise<number> {
    const host = this.#options.registryHost;
    const tags = await fetch(`http://${host}/v2/${app}/tags/list`)
      .then(async (r) => (r.ok ? (((await r.json()) as { tags?: string[] | null }).tags ?? []) : []))
      .catch(() => [] as string[]);
    const images: string[] = [];
    for (const tag of tags) {
      const head = await fetch(`http://${host}/v2/${app}/manifests/${tag}`, {
        method: 'HEAD',
        headers: {
          accept: 'application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json',
        },
      }).catch(() => undefined);
      const digest = head?.headers.get('docker-content-digest');
      if (digest) images.push(`${host}/${app}@${digest}`);
    }
    const removed = await this.remove([...new Set(images)]);
    // Tags of this app left in the engine's storage (a push that never finished).
    const listed = await this.#options.podman.run(['images', '--filter', `reference=${host}/${app}`, '--quiet']);
    const ids = [...new Set(listed.stdout.split('\n').filter(Boolean))];
    if (ids.length > 0) await this.#options.podman.run(['rmi', '--force', ...ids]);
    return removed;
  }

  /**
   * Verifies that `image` (by digest, in the managed registry) is signed by a trusted key and was
   * built from `commit` (ADR 0223); throws a `ValidationError` naming what is wrong.
   */
  async verify(image: string, commit: string): Promise<void> {
    const signing = this.#options.signing;
    if (!signing)
      throw new BuildError(`image signatures are not set up on this host: ${image} cannot be verified`, { image });
    await verifyImageSignature({ config: signing.config, image, commit });
  }

  /** Pulls `image` when it is not present yet (a `build.image` release); throws a clear error when it cannot. */
  async pull(image: string): Promise<ImageConfig> {
    const podman = this.#options.podman;
    if (!(await podman.run(['image', 'exists', image])).ok) {
      const pulled = await podman.run(['pull', '--quiet', image], { timeoutMs: 10 * 60_000 });
      if (!pulled.ok)
        throw new BuildError(`build.image ${image} could not be pulled: ${`${pulled.stderr}`.trim().slice(-2000)}`, {
          engine: 'podman',
          image,
        });
    }
    return this.inspect(image);
  }

  /** The run configuration and labels of a local image. */
  async inspect(image: string): Promise<ImageConfig> {
    const text = await this.#options.podman.check(`inspect of image ${image}`, [
      'image',
      'inspect',
      '--format',
      '{{json .Config}}',
      image,
    ]);
    const config = JSON.parse(text) as {
      Entrypoint?: string[] | null;
      Cmd?: string[] | null;
      Env?: string[] | null;
      WorkingDir?: string;
      User?: string;
      ExposedPorts?: Record<string, unknown> | null;
      Labels?: Record<string, string> | null;
    };
    const env: Record<string, string> = {};
    for (const entry of config.Env ?? []) {
      const at = entry.indexOf('=');
      if (at > 0) env[entry.slice(0, at)] = entry.slice(at + 1);
    }
    return {
      entrypoint: config.Entrypoint && config.Entrypoint.length > 0 ? config.Entrypoint : null,
      cmd: config.Cmd && config.Cmd.length > 0 ? config.Cmd : null,
      env,
      workdir: config.WorkingDir || null,
      user: config.User || null,
      exposedPorts: Object.keys(config.ExposedPorts ?? {}),
      labels: config.Labels ?? {},
    };
  }
}
