/**
 * The source side of the deploy pipeline: where an app's source lives (its `repo.url`, or its own
 * folder in the apps repository), and the clone, inspect, build, test and cleanup steps.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { CanonicalAppSpec } from '../../domain/spec/index.js';
import { StepFailure } from '../errors.js';
import { exportCommit, hasFolder, mirrorRepository, resolveCommit } from '../../platform/git/index.js';
import { readReleaseManifest, type Release, type ReleaseBuilder } from '../../platform/release-builder/index.js';
import { hasCommittedEncrypted, inspectCommittedSecrets } from '../secrets/encrypted-secrets.js';

/** Where an app's source comes from. */
export interface AppSource {
  /** Clone URL or local path. */
  readonly repoUrl: string;
  /** The build context inside the repository; set for apps built from their folder in the apps repository. */
  readonly subdir?: string;
}

/** The source of an app: `repo.url` at its root, else the app's folder in the apps repository (a git checkout). */
export function appSource(spec: CanonicalAppSpec, appFile: string, appsDir: string): AppSource {
  if (spec.repo?.url) return { repoUrl: spec.repo.url };
  return { repoUrl: appsDir, subdir: path.dirname(appFile) };
}

/** Mirrors the source, resolves `ref` (HEAD by default) and exports the tree (or the app's folder) into `workDir`. */
export async function cloneStep(
  source: AppSource,
  mirrorDir: string,
  ref: string,
  workDir: string,
): Promise<{ commit: string; message: string }> {
  await mirrorRepository(source.repoUrl, mirrorDir);
  const commit = await resolveCommit(mirrorDir, ref);
  fs.rmSync(workDir, { recursive: true, force: true });
  // Only the app's folder is written (git archive <commit>:<folder>), not the whole repository.
  try {
    await exportCommit(mirrorDir, commit, workDir, source.subdir);
  } catch (error) {
    if (source.subdir !== undefined && !(await hasFolder(mirrorDir, commit, source.subdir)))
      throw new StepFailure(
        `the app folder ${source.subdir} does not exist in the apps repository at ${commit.slice(0, 12)}`,
      );
    throw error;
  }
  return {
    commit,
    message: `checked out ${ref} at ${commit.slice(0, 12)}${source.subdir !== undefined ? ` (apps repository folder ${source.subdir})` : ''}`,
  };
}

/** One inspection finding. */
export interface InspectFinding {
  readonly severity: 'error' | 'warning';
  readonly rule: string;
  readonly message: string;
}

const SECRET_NAME = /(SECRET|PASSWORD|PASSWD|TOKEN|API_KEY|PRIVATE_KEY)/i;

/**
 * Preflight inspection of a checkout: the Dockerfile is present, every declared secret has a value
 * file under `<secretsDir>/<NAME>` or a committed `secrets/<NAME>.age`, committed secrets are
 * age-encrypted, and known source footguns (committed .env files or
 * node_modules, unpinned base images, remote ADD, secrets baked in by ENV).
 */
export function inspectSource(spec: CanonicalAppSpec, workDir: string, secretsDir: string): InspectFinding[] {
  const findings: InspectFinding[] = [];
  const dockerfile = path.join(workDir, spec.build.dockerfile);
  if (spec.build.image === undefined) {
    if (!fs.existsSync(dockerfile))
      findings.push({
        severity: 'error',
        rule: 'dockerfile.missing',
        message: `build.dockerfile: ${spec.build.dockerfile} does not exist in the source`,
      });
  }
  for (const name of spec.secrets) {
    if (!fs.existsSync(path.join(secretsDir, name)) && !hasCommittedEncrypted(workDir, name))
      findings.push({
        severity: 'error',
        rule: 'secret.missing',
        message: `secrets: ${name} is declared but has no value (expected a file ${name} in the app's secrets folder, or secrets/${name}.age committed)`,
      });
  }
  findings.push(...inspectCommittedSecrets(spec, workDir));
  if (fs.existsSync(path.join(workDir, '.env')))
    findings.push({
      severity: 'warning',
      rule: 'source.env-file',
      message: '.env is committed: values in it reach the release and the image',
    });
  if (fs.existsSync(path.join(workDir, 'node_modules')))
    findings.push({
      severity: 'warning',
      rule: 'source.node-modules',
      message: 'node_modules is committed: install dependencies in the Dockerfile instead',
    });
  if (fs.existsSync(dockerfile)) {
    const lines = fs.readFileSync(dockerfile, 'utf8').split('\n');
    lines.forEach((line, index) => {
      const text = line.trim();
      const from = /^FROM\s+(?:--\S+\s+)?(\S+)/i.exec(text);
      if (
        from &&
        from[1] !== 'scratch' &&
        !from[1]!.includes('@sha256:') &&
        (!from[1]!.includes(':') || from[1]!.endsWith(':latest'))
      ) {
        findings.push({
          severity: 'warning',
          rule: 'dockerfile.unpinned-base',
          message: `Dockerfile line ${index + 1}: base image ${from[1]} is not pinned to a tag or digest`,
        });
      }
      if (/^ADD\s+https?:\/\//i.test(text))
        findings.push({
          severity: 'warning',
          rule: 'dockerfile.remote-add',
          message: `Dockerfile line ${index + 1}: ADD of a URL is not reproducible; download in a RUN step with a checksum`,
        });
      const env = /^(?:ENV|ARG)\s+([A-Za-z_][A-Za-z0-9_]*)[=\s]+\S/i.exec(text);
      if (env && SECRET_NAME.test(env[1]!))
        findings.push({
          severity: 'error',
          rule: 'dockerfile.baked-secret',
          message: `Dockerfile line ${index + 1}: ${env[1]} looks like a secret baked into the image; declare it in secrets instead`,
        });
    });
  }
  return findings;
}

/** The production profile deploys only images pinned by digest. */
export function assertBuildAllowed(spec: CanonicalAppSpec, profile: string): void {
  if (profile !== 'production') return;
  if (spec.build.image === undefined || !/@sha256:[0-9a-f]{64}$/.test(spec.build.image)) {
    throw new StepFailure(
      `build.image: the production profile requires an immutable image@sha256:<digest>${spec.build.image ? `, got ${spec.build.image}` : ', and none is set'}`,
      undefined,
      { code: 'digest_required' },
    );
  }
}

/** Builds (or reuses) the release of the app at `commit`. */
export async function buildStep(
  builder: ReleaseBuilder,
  app: string,
  spec: CanonicalAppSpec,
  source: AppSource,
  commit: string,
  checkout?: string,
): Promise<{ release: Release; message: string }> {
  const release = await builder.build({
    app,
    repoUrl: source.repoUrl,
    ref: commit,
    dockerfile: spec.build.dockerfile,
    // The build args the platform provides: a Dockerfile that declares `ARG SVC_COMMIT` can stamp it.
    buildArgs: { SVC_APP: app, SVC_COMMIT: commit },
    ...(spec.build.image !== undefined ? { image: spec.build.image } : {}),
    ...(source.subdir !== undefined ? { subdir: source.subdir } : {}),
    // The clone step's checkout of this commit: copied, not exported from the mirror a second time.
    ...(checkout !== undefined ? { tree: checkout } : {}),
  });
  return {
    release,
    message: `${release.reused ? 'reused' : 'built'} release ${commit.slice(0, 12)} (${release.manifest.builder})`,
  };
}

/** Tail kept of a test command's output. */
export const OUTPUT_TAIL = 8000;

/** Runs `build.test` with `/bin/sh -c` in the checkout; a non-zero exit fails with the output kept. */
export function testStep(
  command: string,
  workDir: string,
  env: Readonly<Record<string, string>>,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<{ message: string; output: string }> {
  const base: Record<string, string> = {};
  for (const name of ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TMPDIR', 'USER']) {
    const value = process.env[name];
    if (value !== undefined) base[name] = value;
  }
  return new Promise((resolve, reject) => {
    execFile(
      '/bin/sh',
      ['-c', command],
      {
        cwd: workDir,
        env: { ...base, CI: 'true', ...env },
        timeout: timeoutMs,
        maxBuffer: 16 * 1024 * 1024,
        ...(signal ? { signal } : {}),
      },
      (error, stdout, stderr) => {
        const output = `${stdout}${stderr}`.slice(-OUTPUT_TAIL);
        if (!error) {
          resolve({ message: `test command passed: ${command}`, output });
          return;
        }
        const code = typeof error.code === 'number' ? error.code : null;
        const why = error.killed
          ? `was killed after ${timeoutMs} ms`
          : code !== null
            ? `exited with code ${code}`
            : error.message;
        reject(new StepFailure(`build.test "${command}" ${why}`, output, { code: 'test_failed' }));
      },
    );
  });
}

/**
 * Removes the attempt's temporary checkout and old releases of the app, keeping the releases
 * named in `keep` (those rollback may need and the one running).
 */
export function cleanupStep(
  workDir: string,
  releasesDir: string,
  keep: ReadonlySet<string>,
): { message: string; images: string[] } {
  fs.rmSync(workDir, { recursive: true, force: true });
  fs.rmSync(`${workDir}.tree`, { recursive: true, force: true });
  const removed: string[] = [];
  const images: string[] = [];
  if (fs.existsSync(releasesDir)) {
    for (const name of fs.readdirSync(releasesDir)) {
      if (!/^[0-9a-f]{40}$/.test(name) || keep.has(name)) continue;
      // An image the platform built goes with its release (a `build.image` is the operator's).
      const manifest = readReleaseManifest(path.join(releasesDir, name));
      if (manifest?.builder === 'podman' && manifest.image) images.push(manifest.image);
      fs.rmSync(path.join(releasesDir, name), { recursive: true, force: true });
      removed.push(name.slice(0, 12));
    }
  }
  return {
    message: `removed temporary files${removed.length > 0 ? ` and ${removed.length} old release(s) (${removed.join(', ')})` : ''}; kept ${keep.size} release(s) for rollback`,
    images,
  };
}

/**
 * Verifies the production profile's `build.image` (ADR 0223): signed by a key the platform trusts,
 * built from `commit`. Refusals fail the step with their own code (`image_signature_invalid`,
 * `image_revision_mismatch`, `image_not_found`); returns what the step's message adds.
 */
export async function verifyBuildImage(
  verify: (image: string, commit: string) => Promise<void>,
  image: string,
  commit: string,
): Promise<string> {
  try {
    await verify(image, commit);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new StepFailure(`build.image refused: ${(error as Error).message}`, undefined, {
      code: typeof code === 'string' ? code : 'image_refused',
      cause: error,
    });
  }
  return `; signature verified, built from ${commit.slice(0, 12)}`;
}
