/**
 * Release builder: produces the immutable release of an app at a commit under
 * `<dataDir>/releases/<app>/<sha>/` (the repository tree in `app/`, the manifest in
 * `release.json`), natively on the host or as a container image where an engine answers.
 * An existing release is reused, never rebuilt.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { ValidationError } from '../../domain/errors.js';
import { BuildError } from '../errors.js';
import type { Duration } from '../../domain/scheduler/index.js';
import { exportCommit, hasFolder, mirrorRepository, resolveCommit } from '../git/index.js';
import { silentLogger } from '../logger.js';
import type { ImageBuilder } from '../containers/image-builder.js';
import { IMAGE_REVISION_LABEL } from '../containers/image-signature.js';
import { parseDockerfile } from './dockerfile.js';
import { effectiveCommand, hostPathFor, planNativeBuild, type NativeRunStep } from './native-build-plan.js';
import { readReleaseManifest, RELEASE_APP_DIR, RELEASE_MANIFEST, type ReleaseManifest } from './release-manifest.js';

/** Options of the release builder. */
export interface ReleaseBuilderOptions {
  /** Releases live in `<dataDir>/releases`, repository mirrors in `<dataDir>/repos`. */
  readonly dataDir: string;
  /** @default silent */
  readonly logger?: Logger;
  /**
   * Builds Dockerfiles into images and pushes them to the managed registry (ADR 0219); undefined:
   * every release is native (the Dockerfile honoured on the host, ADR 0043).
   */
  readonly images?: ImageBuilder;
  /** `native` builds natively even with {@link images} (an operator's or an app's choice). @default container when images are given */
  readonly engine?: 'native' | 'container';
  /** Limit of one RUN step. @default 10 minutes */
  readonly runTimeout?: Duration;
}

/** What to build. */
export interface BuildReleaseRequest {
  readonly app: string;
  /** `repo.url`: a clone URL, a local path or a file:// URL. */
  readonly repoUrl?: string;
  /** Commit sha (full or abbreviated), branch or tag. */
  readonly ref: string;
  /** `build.dockerfile`, relative to the repository root. @default Dockerfile */
  readonly dockerfile?: string;
  /** `build.image`: an externally published image, recorded as is. */
  readonly image?: string;
  /** Values for the Dockerfile's ARGs. */
  readonly buildArgs?: Readonly<Record<string, string>>;
  /** Build this release natively even where images are built (the operator's or the app's choice). */
  readonly native?: boolean;
  /** Each line of a container build's output, as it comes. */
  readonly onBuildLine?: (line: string) => void;
  /**
   * Build context inside the repository (e.g. the app's folder in the apps repository); the release
   * holds only this folder and `dockerfile` is relative to it. @default the repository root
   */
  readonly subdir?: string;
  /**
   * The build context's files at `ref`, as the caller exported them (a deploy's checkout, before
   * anything ran in it): copied instead of exported from the mirror again.
   */
  readonly tree?: string;
}

/** A built (or reused) release. */
export interface Release {
  /** `<dataDir>/releases/<app>/<sha>`. */
  readonly dir: string;
  readonly manifest: ReleaseManifest;
  /** True when the release already existed and nothing was built. */
  readonly reused: boolean;
}

const SEGMENT = /^[a-z0-9][a-z0-9._-]{0,62}$/;
const FULL_SHA = /^[0-9a-f]{40}$/;

/** Builds and finds releases. */
export class ReleaseBuilder {
  readonly #options: ReleaseBuilderOptions;
  readonly #logger: Logger;
  readonly #inFlight = new Map<string, Promise<Release>>();
  readonly #mirrorQueues = new Map<string, Promise<unknown>>();

  constructor(options: ReleaseBuilderOptions) {
    this.#options = options;
    this.#logger = options.logger ?? silentLogger();
  }

  /** The release directory of an app at a commit. */
  releaseDir(app: string, commit: string): string {
    return path.join(this.#options.dataDir, 'releases', app, commit);
  }

  /** An existing release, or undefined. */
  get(app: string, commit: string): Release | undefined {
    const dir = this.releaseDir(app, commit);
    const manifest = readReleaseManifest(dir);
    return manifest ? { dir, manifest, reused: true } : undefined;
  }

  /** Releases of an app, newest first. */
  list(app: string): Release[] {
    const root = path.join(this.#options.dataDir, 'releases', app);
    if (!fs.existsSync(root)) return [];
    return fs
      .readdirSync(root)
      .filter((name) => FULL_SHA.test(name))
      .flatMap((commit) => this.get(app, commit) ?? [])
      .sort((a, b) => b.manifest.createdAt.localeCompare(a.manifest.createdAt));
  }

  /** Builds the release of `request.app` at `request.ref`, or returns the existing one. */
  async build(request: BuildReleaseRequest): Promise<Release> {
    if (!SEGMENT.test(request.app))
      throw new ValidationError(`app: "${request.app}" must be a lower-case DNS-style name`);
    const dockerfile = request.dockerfile ?? 'Dockerfile';
    if (path.isAbsolute(dockerfile) || dockerfile.split('/').includes('..')) {
      throw new ValidationError(`build.dockerfile: "${dockerfile}" must be a path inside the repository`);
    }
    if (
      request.subdir !== undefined &&
      (request.subdir === '' || path.isAbsolute(request.subdir) || request.subdir.split('/').includes('..'))
    ) {
      throw new ValidationError(`build context: "${request.subdir}" must be a folder inside the repository`);
    }
    let commit: string;
    let mirror: string | undefined;
    if (request.repoUrl !== undefined) {
      const gitDir = path.join(this.#options.dataDir, 'repos', `${request.app}.git`);
      mirror = gitDir;
      const repoUrl = request.repoUrl;
      // A full sha the mirror already holds (the deploy's clone step just fetched it) needs no
      // fetch: a commit never changes. A branch or tag is fetched first, as it may have moved.
      const known =
        FULL_SHA.test(request.ref) && (this.get(request.app, request.ref) !== undefined || fs.existsSync(gitDir))
          ? await resolveCommit(gitDir, request.ref).catch(() => undefined)
          : undefined;
      commit =
        known ??
        (await this.#serialized(request.app, async () => {
          await mirrorRepository(repoUrl, gitDir);
          return resolveCommit(gitDir, request.ref);
        }));
    } else if (request.image !== undefined && FULL_SHA.test(request.ref)) {
      commit = request.ref;
    } else {
      throw new ValidationError(`release ${request.app}: needs repo.url, or build.image with a full commit sha`);
    }
    const existing = this.get(request.app, commit);
    if (existing) return existing;
    const key = `${request.app}@${commit}`;
    const running = this.#inFlight.get(key);
    if (running) return running;
    const build = this.#buildNew(request, commit, mirror, dockerfile).finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, build);
    return build;
  }

  /** Runs mirror operations of one app one at a time (concurrent fetches would race on ref locks). */
  #serialized<T>(app: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.#mirrorQueues.get(app) ?? Promise.resolve();
    const run = previous.then(fn, fn);
    this.#mirrorQueues.set(
      app,
      run.catch(() => undefined),
    );
    return run;
  }

  async #buildNew(
    request: BuildReleaseRequest,
    commit: string,
    mirror: string | undefined,
    dockerfile: string,
  ): Promise<Release> {
    const dir = this.releaseDir(request.app, commit);
    const tmp = path.join(
      path.dirname(dir),
      `.tmp-${commit.slice(0, 12)}-${process.pid}-${randomBytes(4).toString('hex')}`,
    );
    const appDir = path.join(tmp, RELEASE_APP_DIR);
    const log = this.#logger.child({ app: request.app, commit });
    try {
      // An app's release folder starts private; the local driver opens it to the app's group only (ADR 0047).
      fs.mkdirSync(path.dirname(dir), { recursive: true, mode: 0o700 });
      fs.mkdirSync(tmp, { recursive: true });
      if (request.tree !== undefined) {
        fs.cpSync(request.tree, appDir, { recursive: true, verbatimSymlinks: true });
      } else if (mirror && request.subdir !== undefined) {
        if (!(await hasFolder(mirror, commit, request.subdir)))
          throw new ValidationError(
            `build context: ${request.subdir} does not exist in the repository at commit ${commit}`,
            { code: 'build_context_missing' },
          );
        await exportCommit(mirror, commit, appDir, request.subdir);
      } else if (mirror) {
        await exportCommit(mirror, commit, appDir);
      }
      const manifest = await this.#produce(request, commit, appDir, dockerfile, mirror !== undefined);
      fs.writeFileSync(path.join(tmp, RELEASE_MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
      makeReadOnlyForOthers(tmp);
      try {
        fs.renameSync(tmp, dir);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'EEXIST' && code !== 'ENOTEMPTY') throw error;
        fs.rmSync(tmp, { recursive: true, force: true });
        const other = this.get(request.app, commit);
        if (other) return other;
        throw error;
      }
      log.info({ builder: manifest.builder }, 'release built');
      return { dir, manifest, reused: false };
    } catch (error) {
      fs.rmSync(tmp, { recursive: true, force: true });
      throw error;
    }
  }

  async #produce(
    request: BuildReleaseRequest,
    commit: string,
    appDir: string,
    dockerfile: string,
    hasSource: boolean,
  ): Promise<ReleaseManifest> {
    const base = { app: request.app, commit, createdAt: new Date().toISOString() };
    const images = request.native === true || this.#options.engine === 'native' ? undefined : this.#options.images;
    if (request.image !== undefined) {
      // Where images run, the image is pulled now: a missing one fails the build, not the start.
      const config = images ? await images.pull(request.image) : undefined;
      return {
        ...base,
        workdir: null,
        env: {},
        command: config ? effectiveCommand(config.entrypoint, config.cmd) : null,
        entrypoint: config?.entrypoint ?? null,
        image: request.image,
        builder: 'external-image',
        dockerfile: null,
        exposedPorts: config?.exposedPorts ?? [],
        ...(config ? { user: config.user, revision: config.labels[IMAGE_REVISION_LABEL] ?? null } : {}),
        notes: images ? [] : [`build.image ${request.image} recorded as is; this host runs no containers`],
      };
    }
    if (!hasSource) throw new ValidationError(`release ${request.app}: nothing to build without repo.url`);
    const dockerfilePath = path.join(appDir, dockerfile);
    if (!fs.existsSync(dockerfilePath)) {
      throw new ValidationError(
        `build.dockerfile: ${dockerfile} does not exist in ${request.app} at commit ${commit}`,
        { code: 'dockerfile_missing' },
      );
    }
    const buildArgs = request.buildArgs ?? {};
    const plan = planNativeBuild(parseDockerfile(fs.readFileSync(dockerfilePath, 'utf8')), buildArgs);
    const command = effectiveCommand(plan.entrypoint, plan.cmd);
    if (images) {
      const built = await images.build({
        app: request.app,
        commit,
        contextDir: appDir,
        dockerfile: dockerfilePath,
        buildArgs,
        ...(request.onBuildLine ? { onLine: request.onBuildLine } : {}),
      });
      return {
        ...base,
        workdir: null,
        env: plan.env,
        command: effectiveCommand(built.config.entrypoint, built.config.cmd),
        entrypoint: built.config.entrypoint,
        image: built.image,
        builder: 'podman',
        dockerfile,
        exposedPorts: built.config.exposedPorts,
        user: built.config.user,
        revision: commit,
        notes: [],
      };
    }
    const notes = [...plan.notes];
    for (const step of plan.runs) await this.#run(request.app, commit, step, appDir, plan.appRoot, notes);
    const workdir = hostPathFor(appDir, plan.appRoot, plan.workdir);
    if (workdir.outside)
      notes.push(
        `WORKDIR ${plan.workdir} lies outside the app root ${plan.appRoot}: the release runs in its app directory`,
      );
    fs.mkdirSync(workdir.path, { recursive: true });
    return {
      ...base,
      workdir: path.relative(path.dirname(appDir), workdir.path),
      env: plan.env,
      command,
      entrypoint: plan.entrypoint,
      image: null,
      builder: 'native',
      dockerfile,
      exposedPorts: plan.exposedPorts,
      user: plan.user,
      notes,
    };
  }

  async #run(
    app: string,
    commit: string,
    step: NativeRunStep,
    appDir: string,
    appRoot: string,
    notes: string[],
  ): Promise<void> {
    const cwd = hostPathFor(appDir, appRoot, step.workdir);
    if (cwd.outside)
      notes.push(
        `line ${step.line}: RUN in ${step.workdir}, outside the app root ${appRoot}, ran in the app directory`,
      );
    fs.mkdirSync(cwd.path, { recursive: true });
    const [file, ...args] = step.argv;
    if (!file)
      throw new BuildError(`build ${app}@${commit.slice(0, 12)}: RUN at Dockerfile line ${step.line} is empty`, {
        line: step.line,
      });
    const env: Record<string, string> = {};
    for (const name of ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TMPDIR', 'USER']) {
      const value = process.env[name];
      if (value !== undefined) env[name] = value;
    }
    Object.assign(env, step.env);
    const timeout = this.#options.runTimeout?.milliseconds ?? 10 * 60_000;
    await new Promise<void>((resolve, reject) => {
      const child = execFile(
        file,
        args,
        { cwd: cwd.path, env, timeout, maxBuffer: 64 * 1024 * 1024 },
        (error, stdout, stderr) => {
          if (!error) {
            resolve();
            return;
          }
          const output = `${stdout}${stderr}`.slice(-4000);
          const exitCode = typeof error.code === 'number' ? error.code : null;
          const why = error.killed
            ? `was killed after ${timeout}ms`
            : exitCode !== null
              ? `exited with code ${exitCode}`
              : `failed: ${error.message}`;
          reject(
            new BuildError(
              `build ${app}@${commit.slice(0, 12)}: RUN ${step.text} (Dockerfile line ${step.line}) ${why}\n${output}`,
              {
                line: step.line,
                instruction: step.text,
                exitCode,
                output,
              },
            ),
          );
        },
      );
      child.stdin?.end();
    });
  }
}

/** Removes group and other write permission from every file and folder (symbolic links untouched). */
function makeReadOnlyForOthers(root: string): void {
  const walk = (p: string): void => {
    const stat = fs.lstatSync(p);
    if (stat.isSymbolicLink()) return;
    fs.chmodSync(p, stat.mode & 0o7755);
    if (stat.isDirectory()) for (const entry of fs.readdirSync(p)) walk(path.join(p, entry));
  };
  walk(root);
}
