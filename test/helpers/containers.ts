/**
 * Helpers of the container tests (ADR 0219): the offline base images must be present (the suite's
 * install step builds them with scripts/base-images.sh), a plane runs with podman, and a test
 * removes the images its registry's builds left in podman's storage.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import type { ExecutionContext } from 'ava';
import type { SvcConfig } from '../../platform/config.js';
import { pipelineConfig } from '../pipeline/pipeline-fixture.js';

export { removeRegistryImages } from './registry-images.js';

/** Longest wait for a container deploy (a podman build on a loaded 2-core machine). */
export const CONTAINER_DEPLOY_MS = 120_000;

/** The base images the container tests build FROM. */
export const NODE_BASE = 'docker.io/library/node:20-bookworm-slim';
export const RUBY_BASE = 'docker.io/library/ruby:3.1-slim-bookworm';

/** The Dockerfile of a fixture app (its server.mjs) run as a container from the offline Node base. */
export const CONTAINER_DOCKERFILE = 'FROM node:20-bookworm-slim\nWORKDIR /app\nCOPY . .\nCMD ["node", "server.mjs"]\n';

/** Throws a clear error unless the offline base images are in podman's storage. */
export function assertBaseImages(): void {
  for (const image of [NODE_BASE, RUBY_BASE]) {
    if (spawnSync('podman', ['image', 'exists', image]).status !== 0)
      throw new Error(`${image} is not in podman's storage: run scripts/base-images.sh (npm test's install step does)`);
  }
}

/** A pipeline test config whose plane runs apps as podman containers. */
export function containerConfig(t: ExecutionContext, env: Record<string, string> = {}): SvcConfig {
  assertBaseImages();
  return pipelineConfig(t, { SVC_CONTAINER_RUNTIME: 'podman', SVC_DEPLOY_HEALTHY_TIMEOUT: '30s', ...env });
}

/** Containers podman knows for the allocation-labelled app `app` (with `status`, those in it: created, running, exited). */
export function containersOf(app: string, status?: string): string[] {
  const filters = ['--filter', `label=io.svc.app=${app}`, ...(status ? ['--filter', `status=${status}`] : [])];
  const out = execFileSync('podman', ['ps', '--all', ...filters, '--format', '{{.Names}}'], {
    encoding: 'utf8',
  });
  return out.split('\n').filter(Boolean);
}

/**
 * The id, host pid and start time of container `name` (`<id> <pid> <startedAt>`): a restarted
 * container changes its pid and start time, a replaced one its id too.
 */
export function containerState(name: string): string {
  return execFileSync('podman', ['inspect', '--format', '{{.Id}} {{.State.Pid}} {{.State.StartedAt}}', name], {
    encoding: 'utf8',
  }).trim();
}

/** A file of `image`, read by a throwaway container of it (podman with runc, within the host's rlimits). */
export function readImageFile(image: string, file: string): string {
  return execFileSync(
    'podman',
    [
      'run',
      '--rm',
      '--runtime',
      'runc',
      '--ulimit',
      'nofile=1024:1024',
      '--ulimit',
      'nproc=1024:1024',
      '--entrypoint',
      'cat',
      image,
      file,
    ],
    { encoding: 'utf8' },
  ).trim();
}
