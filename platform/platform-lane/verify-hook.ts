/**
 * The verify hook of the signature policy: a command (`SVC_RELEASE_VERIFY_HOOK`, formerly
 * `SVC_RELEASE_VERIFY_COMMAND`, run with `/bin/sh -c`) that must exit 0 for a release to be
 * promoted. It gets the release folder and its identity (tag, commit, SHA-256) in its environment;
 * its output tail is kept with the verdict.
 */
import { spawn } from 'node:child_process';
import { releaseTag } from '../../domain/platform/index.js';
import type { ReleaseManifest } from './release-folders.js';

/** The verdict of the hook. */
export interface VerifyOutcome {
  readonly accepted: boolean;
  readonly message: string;
}

/** Runs `command` for the release at `dir`. */
export function runVerifyHook(
  command: string,
  dir: string,
  manifest: ReleaseManifest,
  options: { signal: AbortSignal; timeoutMs?: number },
): Promise<VerifyOutcome> {
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', command], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      signal: options.signal,
      timeout: options.timeoutMs ?? 120_000,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? '/',
        SVC_RELEASE_DIR: dir,
        SVC_RELEASE_ID: manifest.id,
        SVC_RELEASE_SHA256: manifest.sha256,
        SVC_RELEASE_COMMIT: manifest.commit ?? '',
        SVC_RELEASE_TAG: releaseTag(manifest.commit) ?? '',
        SVC_RELEASE_LABEL: manifest.label,
      },
    });
    let output = '';
    const keep = (d: Buffer) => {
      output = (output + d.toString()).slice(-4096);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (error) =>
      resolve({ accepted: false, message: `the verify command could not run: ${error.message}` }),
    );
    child.on('close', (code, signal) => {
      const tail = output.trim();
      if (code === 0) resolve({ accepted: true, message: tail === '' ? 'the verify command exited 0' : tail });
      else
        resolve({
          accepted: false,
          message: `the verify command ${signal ? `was killed by ${signal}` : `exited ${code}`}${tail === '' ? '' : `: ${tail}`}`,
        });
    });
  });
}
