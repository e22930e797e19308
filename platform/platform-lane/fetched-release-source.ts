/**
 * A release source that fetches the release artifact by its tag (the spec's fetch selector,
 * `platform-<full commit sha>`, ADR 0142): `SVC_RELEASE_FETCH_HOOK` runs with `/bin/sh -c` and must
 * leave exactly one archive (and optionally its `.sha256` and `.sig`) in an empty folder; that
 * archive is staged as the release artifact, and its `svc-release.json` must name the requested
 * commit: the identity comes from the selector and the artifact, never from a label.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { selectorCommit, type ReleaseSource, type StagedRelease } from '../../domain/platform/index.js';
import { ArtifactSource, hostTarget } from './artifact-source.js';
import type { ReleasePublicKey } from './release-signature.js';

/** What fetching needs. */
export interface FetchedReleaseOptions {
  /** `SVC_RELEASE_FETCH_HOOK`. */
  readonly hook: string;
  /** `SVC_RELEASE_REPOSITORY`, passed to the hook. */
  readonly repository?: string;
  readonly publicKey?: ReleasePublicKey;
  /** @default 10 minutes */
  readonly timeoutMs?: number;
}

/** The artifact named by `selector`, fetched by the hook. */
export class FetchedReleaseSource implements ReleaseSource {
  readonly #selector: string;
  readonly #options: FetchedReleaseOptions;
  #fetched: string | undefined;

  constructor(selector: string, options: FetchedReleaseOptions) {
    this.#selector = selector;
    this.#options = options;
  }

  /** `fetch:platform-<sha>`, with the archive and its SHA-256 once fetched. */
  get description(): string {
    return `fetch:${this.#selector}${this.#options.repository === undefined ? '' : ` from ${this.#options.repository}`}${this.#fetched === undefined ? '' : ` (${this.#fetched})`}`;
  }

  async stage(into: string, signal: AbortSignal): Promise<StagedRelease> {
    const selected = selectorCommit(this.#selector);
    if ('error' in selected) throw new Error(selected.error);
    // Inside the staging folder: removed before the tree is fingerprinted, and with it after a crash.
    const fetchDir = fs.mkdtempSync(path.join(into, '.fetch-'));
    try {
      await this.#runHook(fetchDir, selected.commit, signal);
      const archive = fetchedArchive(fetchDir);
      const artifact = new ArtifactSource(
        archive,
        this.#options.publicKey === undefined ? {} : { publicKey: this.#options.publicKey },
      );
      const staged = await artifact.stage(into, signal);
      this.#fetched = `${path.basename(archive)}, sha256 ${artifact.archiveSha256 ?? '?'}`;
      if (staged.commit !== selected.commit) {
        throw new Error(
          `the fetched ${path.basename(archive)} is commit ${staged.commit ?? '(none)'} by its svc-release.json, not ${selected.commit}: refused (a release's identity never derives from a file name or label)`,
        );
      }
      return staged;
    } finally {
      fs.rmSync(fetchDir, { recursive: true, force: true });
    }
  }

  #runHook(dir: string, commit: string, signal: AbortSignal): Promise<void> {
    const { hook, repository, timeoutMs } = this.#options;
    return new Promise((resolve, reject) => {
      const child = spawn('/bin/sh', ['-c', hook], {
        cwd: dir,
        stdio: ['ignore', 'pipe', 'pipe'],
        signal,
        timeout: timeoutMs ?? 600_000,
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: process.env.HOME ?? '/',
          SVC_RELEASE_REPOSITORY: repository ?? '',
          SVC_RELEASE_TAG: this.#selector,
          SVC_RELEASE_COMMIT: commit,
          SVC_RELEASE_TARGET: hostTarget(),
          SVC_RELEASE_FETCH_DIR: dir,
        },
      });
      let output = '';
      const keep = (d: Buffer) => {
        output = (output + d.toString()).slice(-2000);
      };
      child.stdout.on('data', keep);
      child.stderr.on('data', keep);
      child.once('error', (error) =>
        reject(new Error(`the fetch hook could not run: ${error.message}`, { cause: error })),
      );
      child.once('close', (code, killed) => {
        if (code === 0) return resolve();
        const tail = output.trim();
        reject(
          new Error(
            `the fetch hook (SVC_RELEASE_FETCH_HOOK) ${killed ? `was killed by ${killed}` : `exited ${code}`} fetching ${this.#selector}${tail === '' ? '' : `: ${tail}`}`,
          ),
        );
      });
    });
  }
}

/** The one archive the hook left in `dir` (beside it only its `.sha256` and `.sig`). */
function fetchedArchive(dir: string): string {
  const names = fs.readdirSync(dir).sort();
  const archives = names.filter((n) => /\.(tar\.gz|tgz)$/.test(n));
  if (archives.length !== 1) {
    throw new Error(
      `the fetch hook must leave exactly one release archive (.tar.gz) in SVC_RELEASE_FETCH_DIR, it left ${archives.length === 0 ? `none (${names.length === 0 ? 'the folder is empty' : names.slice(0, 5).join(', ')})` : archives.join(', ')}`,
    );
  }
  const archive = archives[0]!;
  const other = names.filter((n) => n !== archive && n !== `${archive}.sha256` && n !== `${archive}.sig`);
  if (other.length > 0)
    throw new Error(
      `the fetch hook left files other than ${archive} and its .sha256 and .sig: ${other.slice(0, 5).join(', ')}`,
    );
  const file = path.join(dir, archive);
  if (!fs.lstatSync(file).isFile()) throw new Error(`${archive} left by the fetch hook is not a regular file`);
  return file;
}
