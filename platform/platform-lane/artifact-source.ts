/**
 * A release source that stages the release artifact (ADR 0140, ADR 0087): the archive
 * `svc-<version>-linux-<arch>.tar.gz` (checked against the `.sha256` beside it when there is one,
 * unpacked with `tar` inside the staging folder) or an unpacked artifact folder (copied). Either
 * way the staged tree is the artifact's one folder: the `svc` executable, `svc-release.json`, the
 * native parts and data files. Nothing is shared with the running release.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { ReleaseSource, SignatureCheck, StagedRelease } from '../../domain/platform/index.js';
import {
  RELEASE_EXECUTABLE,
  RELEASE_MANIFEST,
  parsePlatformRelease,
  type PlatformRelease,
} from '../../domain/host-install/index.js';
import { defaultReleaseLabel } from './built-checkout-source.js';
import { checkSignature, type ReleasePublicKey } from './release-signature.js';

/** True when `spec` names an artifact archive (`.tar.gz`, `.tgz`) or an unpacked artifact folder. */
export function isReleaseArtifact(spec: string): boolean {
  if (/\.(tar\.gz|tgz)$/.test(spec)) return true;
  return isArtifactFolder(spec);
}

/** A folder holding the `svc` executable and `svc-release.json` (and no `bin/svc.js`: that is a built checkout). */
export function isArtifactFolder(dir: string): boolean {
  return (
    fs.existsSync(path.join(dir, RELEASE_EXECUTABLE)) &&
    fs.existsSync(path.join(dir, RELEASE_MANIFEST)) &&
    !fs.existsSync(path.join(dir, 'bin', 'svc.js'))
  );
}

/** The target this host runs: `linux-x64`, `linux-arm64`. */
export function hostTarget(): string {
  return `${process.platform}-${process.arch}`;
}

/** Hex SHA-256 of a file, streamed. */
export async function fileSha256(file: string, signal?: AbortSignal): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of fs.createReadStream(file, signal === undefined ? {} : { signal }))
    hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** What the artifact source is given besides the path. */
export interface ArtifactSourceOptions {
  /** `SVC_RELEASE_PUBLIC_KEY`: the archive's `.sig` is checked with it (ADR 0142). */
  readonly publicKey?: ReleasePublicKey;
}

/** The release artifact at `spec`: an archive or an unpacked folder. */
export class ArtifactSource implements ReleaseSource {
  readonly #spec: string;
  readonly #archive: boolean;
  readonly #publicKey: ReleasePublicKey | undefined;
  #sha256: string | undefined;

  constructor(spec: string, options: ArtifactSourceOptions = {}) {
    this.#spec = path.resolve(spec);
    this.#archive = /\.(tar\.gz|tgz)$/.test(this.#spec);
    this.#publicKey = options.publicKey;
  }

  /** `artifact:<path>`, with the archive's SHA-256 once it was read (recorded as the release's source). */
  get description(): string {
    return `artifact:${this.#spec}${this.#sha256 === undefined ? '' : ` (sha256 ${this.#sha256})`}`;
  }

  /** The archive's SHA-256 once it was staged. */
  get archiveSha256(): string | undefined {
    return this.#sha256;
  }

  async stage(into: string, signal: AbortSignal): Promise<StagedRelease> {
    let signature: SignatureCheck | undefined;
    let release: PlatformRelease;
    if (this.#archive) ({ release, signature } = await this.#unpack(into, signal));
    else {
      release = await this.#copy(into, signal);
      if (this.#publicKey)
        signature = {
          state: 'unsupported',
          message: `${this.#spec} is an unpacked folder: only the archive (.tar.gz with its .sig) carries a signature`,
        };
    }
    return {
      version: release.version,
      commit: release.commit,
      label: defaultReleaseLabel(release.version, release.commit),
      ...(signature === undefined ? {} : { signature }),
    };
  }

  /**
   * Reads the archive once: its SHA-256, its signature and what is unpacked are all over the same
   * bytes (the file may change meanwhile without effect).
   */
  async #unpack(into: string, signal: AbortSignal): Promise<{ release: PlatformRelease; signature?: SignatureCheck }> {
    const archive = this.#spec;
    if (!fs.statSync(archive, { throwIfNoEntry: false })?.isFile())
      throw new Error(`the release archive ${archive} does not exist`);
    const bytes = await fs.promises.readFile(archive, { signal });
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    this.#sha256 = sha256;
    const sumFile = `${archive}.sha256`;
    if (fs.existsSync(sumFile)) {
      const expected = /^([0-9a-fA-F]{64})\b/.exec(fs.readFileSync(sumFile, 'utf8').trim())?.[1]?.toLowerCase();
      if (expected === undefined) throw new Error(`${sumFile} does not start with a SHA-256 (64 hex digits)`);
      if (expected !== sha256)
        throw new Error(
          `the release archive ${archive} does not match ${path.basename(sumFile)}: its SHA-256 is ${sha256}, the file says ${expected}`,
        );
    }
    const signature =
      this.#publicKey === undefined
        ? undefined
        : checkSignature(bytes, `${archive}.sig`, this.#publicKey, path.basename(archive));
    // Unpacked inside the staging folder (same file system: the folder is then moved up by rename).
    const unpacked = fs.mkdtempSync(path.join(into, '.unpack-'));
    try {
      await untar(bytes, unpacked, signal).catch((error: Error) => {
        throw new Error(`unpacking ${archive} failed: ${error.message}`, { cause: error });
      });
      const top = fs.readdirSync(unpacked);
      const folder = top.length === 1 ? path.join(unpacked, top[0]!) : undefined;
      if (folder === undefined || !fs.lstatSync(folder).isDirectory()) {
        throw new Error(
          `${archive} is not a release artifact: it must hold exactly one folder (svc-<version>-<target>/), it holds ${top.length === 0 ? 'nothing' : top.slice(0, 5).join(', ')}`,
        );
      }
      const release = readArtifact(folder, archive);
      for (const name of fs.readdirSync(folder)) {
        signal.throwIfAborted();
        fs.renameSync(path.join(folder, name), path.join(into, name));
      }
      return { release, ...(signature === undefined ? {} : { signature }) };
    } finally {
      fs.rmSync(unpacked, { recursive: true, force: true });
    }
  }

  async #copy(into: string, signal: AbortSignal): Promise<PlatformRelease> {
    const dir = this.#spec;
    if (!fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory())
      throw new Error(`the release artifact folder ${dir} does not exist`);
    const release = readArtifact(dir, dir);
    for (const name of fs.readdirSync(dir)) {
      signal.throwIfAborted();
      // A staged release's own manifest is written again by the release folders.
      if (name === 'release.json') continue;
      await fs.promises.cp(path.join(dir, name), path.join(into, name), {
        recursive: true,
        dereference: false,
        verbatimSymlinks: true,
        preserveTimestamps: true,
      });
    }
    return release;
  }
}

/** Unpacks gzip'd tar `bytes` into `dir` (`tar` reads them on its standard input). */
function untar(bytes: Buffer, dir: string, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const tar = spawn('tar', ['-xzf', '-', '-C', dir, '--no-same-owner'], {
      stdio: ['pipe', 'ignore', 'pipe'],
      signal,
    });
    let errors = '';
    tar.stderr.on('data', (d: Buffer) => (errors = (errors + d.toString()).slice(-2000)));
    tar.stdin.on('error', () => {
      // tar exited early (a damaged archive): its exit code and message say why.
    });
    tar.once('error', reject);
    tar.once('close', (code) =>
      code === 0 ? resolve() : reject(new Error(errors.trim().slice(0, 1000) || `tar exited ${code}`)),
    );
    tar.stdin.end(bytes);
  });
}

/** Checks an unpacked artifact folder and reads its manifest; `named` is what the messages call it. */
function readArtifact(folder: string, named: string): PlatformRelease {
  const manifestFile = path.join(folder, RELEASE_MANIFEST);
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(manifestFile, 'utf8'));
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'it is missing' : (error as Error).message;
    throw new Error(`${named} is not a release artifact: ${RELEASE_MANIFEST} cannot be read (${reason})`);
  }
  const release = parsePlatformRelease(raw);
  if (typeof release === 'string')
    throw new Error(`${named} is not a release artifact: ${RELEASE_MANIFEST} is invalid: ${release}`);
  if (release.target !== hostTarget())
    throw new Error(`${named} is built for ${release.target}, and this host is ${hostTarget()}`);
  const executable = path.join(folder, RELEASE_EXECUTABLE);
  try {
    fs.accessSync(executable, fs.constants.X_OK);
  } catch {
    throw new Error(`${named} is not a release artifact: it has no executable ${RELEASE_EXECUTABLE}`);
  }
  return release;
}
