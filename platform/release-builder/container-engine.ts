/**
 * Container engine: detects a working podman or docker (the client answering `info`, which needs
 * a running engine) and builds a Dockerfile into an image.
 */
import { execFile } from 'node:child_process';
import { DomainError } from '../../domain/errors.js';

/** Engines we can drive. */
export const ContainerEngine = { podman: 'podman', docker: 'docker' } as const;
export type ContainerEngine = (typeof ContainerEngine)[keyof typeof ContainerEngine];

function run(file: string, args: readonly string[], timeoutMs: number): Promise<{ ok: boolean; output: string }> {
  return new Promise((resolve) => {
    execFile(file, [...args], { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ ok: !error, output: `${stdout}${stderr}` });
    });
  });
}

/** The first engine whose `info` succeeds (podman first), or undefined when none answers. */
export async function detectContainerEngine(timeoutMs = 10_000): Promise<ContainerEngine | undefined> {
  for (const engine of [ContainerEngine.podman, ContainerEngine.docker]) {
    if ((await run(engine, ['info'], timeoutMs)).ok) return engine;
  }
  return undefined;
}

/** Builds `contextDir` with `dockerfile` into `tag`; rejects with the build output on failure. */
export async function buildImage(
  engine: ContainerEngine,
  contextDir: string,
  dockerfile: string,
  tag: string,
  buildArgs: Readonly<Record<string, string>>,
): Promise<void> {
  const args = ['build', '-t', tag, '-f', dockerfile];
  for (const [key, value] of Object.entries(buildArgs)) args.push('--build-arg', `${key}=${value}`);
  args.push(contextDir);
  const result = await run(engine, args, 30 * 60_000);
  if (!result.ok) {
    throw new DomainError(
      'unprocessable',
      'build_failed',
      `${engine} build of ${tag} failed:\n${result.output.slice(-4000)}`,
      {
        details: { engine, tag },
      },
    );
  }
}
