/**
 * Platform releases on disk: `<root>/releases/<id>/` (each a runnable tree with a `release.json`)
 * and the `<root>/current` symbolic link, swapped atomically (a new link renamed over the old).
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import {
  releaseId,
  type PlatformReleaseBuild,
  type ReleaseSource,
  type SignatureCheck,
} from '../../domain/platform/index.js';
import { treeFingerprint } from './tree-fingerprint.js';

/** What `release.json` in a release folder says: the release's identity and label, not its verdict. */
export type ReleaseManifest = Pick<PlatformReleaseBuild, 'id' | 'label' | 'version' | 'commit' | 'sha256' | 'source'>;

/** A staged release: its folder and manifest. */
export interface StagedReleaseFolder {
  readonly dir: string;
  readonly manifest: ReleaseManifest;
  /** False when a release with this identity was already on disk (nothing was copied). */
  readonly created: boolean;
  /** What the source's signature check found (an artifact staged with a public key). */
  readonly signature?: SignatureCheck;
}

/** Reads a release folder's manifest, or undefined when it has none. */
export function readReleaseManifest(dir: string): ReleaseManifest | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, 'release.json'), 'utf8')) as ReleaseManifest;
  } catch {
    return undefined;
  }
}

/** The releases folder and the `current` link. */
export class ReleaseFolders {
  readonly root: string;
  readonly releasesDir: string;
  readonly currentLink: string;

  constructor(root: string) {
    this.root = path.resolve(root);
    this.releasesDir = path.join(this.root, 'releases');
    this.currentLink = path.join(this.root, 'current');
  }

  /** The folder of release `id`. */
  dir(id: string): string {
    return path.join(this.releasesDir, id);
  }

  /**
   * The release `current` points at, or undefined when there is no link yet or it points at a folder
   * that is no release of the lane (no `release.json`: `svc install`'s `releases/<version>`, ADR 0087),
   * whose running tree the lane then stages as its first release.
   */
  current(): { id: string; dir: string } | undefined {
    let target: string;
    try {
      target = fs.readlinkSync(this.currentLink);
    } catch {
      return undefined;
    }
    const dir = path.resolve(this.root, target);
    const id = path.basename(dir);
    return path.dirname(dir) === this.releasesDir && this.has(id) ? { id, dir } : undefined;
  }

  /** True when release `id` is on disk with its manifest. */
  has(id: string): boolean {
    return readReleaseManifest(this.dir(id))?.id === id;
  }

  /**
   * Stages a release from `source`: filled into a private folder, fingerprinted, then renamed to
   * `releases/<id>/`. A release already on disk with the same identity is reused.
   */
  async stage(source: ReleaseSource, options: { label?: string; signal: AbortSignal }): Promise<StagedReleaseFolder> {
    fs.mkdirSync(this.releasesDir, { recursive: true });
    const staging = path.join(this.releasesDir, `.staging-${randomBytes(6).toString('hex')}`);
    fs.mkdirSync(staging);
    try {
      const staged = await source.stage(staging, options.signal);
      const sha256 = await treeFingerprint(staging);
      const id = releaseId(staged.version, staged.commit, sha256);
      const manifest: ReleaseManifest = {
        id,
        label: options.label ?? staged.label,
        version: staged.version,
        commit: staged.commit,
        sha256,
        source: source.description,
      };
      const dir = this.dir(id);
      if (this.has(id)) {
        // Same identity: keep the folder that may be running; only the label may differ.
        fs.rmSync(staging, { recursive: true, force: true });
        return {
          dir,
          manifest: { ...readReleaseManifest(dir)!, label: manifest.label, source: manifest.source },
          created: false,
          ...signed(staged.signature),
        };
      }
      fs.writeFileSync(path.join(staging, 'release.json'), JSON.stringify(manifest, null, 2) + '\n');
      fs.rmSync(dir, { recursive: true, force: true });
      fs.renameSync(staging, dir);
      return { dir, manifest, created: true, ...signed(staged.signature) };
    } catch (error) {
      fs.rmSync(staging, { recursive: true, force: true });
      throw error;
    }
  }

  /** Points `current` at release `id`: a new link renamed over the old one (atomic), then the folder synced. */
  swap(id: string): void {
    if (!this.has(id)) throw new Error(`release ${id} is not on disk in ${this.releasesDir}`);
    const temp = path.join(this.root, `.current-${randomBytes(6).toString('hex')}`);
    fs.symlinkSync(path.join('releases', id), temp);
    fs.renameSync(temp, this.currentLink);
    const fd = fs.openSync(this.root, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  }

  /** Removes release `id`'s folder: renamed aside first, so a half-removed folder never passes for a release. */
  remove(id: string): void {
    const dir = this.dir(id);
    if (!fs.existsSync(dir)) return;
    const aside = path.join(this.releasesDir, `.removing-${randomBytes(6).toString('hex')}`);
    fs.renameSync(dir, aside);
    fs.rmSync(aside, { recursive: true, force: true });
  }

  /** True while a live process runs from release `id` (its executable, or a path in its command line, is in the folder). */
  inUse(id: string): boolean {
    const dir = `${this.dir(id)}/`;
    for (const entry of safeList('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(dir)) return true;
        if (fs.readlinkSync(`/proc/${entry}/exe`).startsWith(dir)) return true;
      } catch {
        // Gone meanwhile, or not ours to read.
      }
    }
    return false;
  }

  /** Removes stale staging folders and links a crashed stage or swap left behind. */
  cleanStaging(): void {
    for (const name of safeList(this.releasesDir))
      if (name.startsWith('.staging-') || name.startsWith('.removing-'))
        fs.rmSync(path.join(this.releasesDir, name), { recursive: true, force: true });
    for (const name of safeList(this.root))
      if (name.startsWith('.current-')) fs.rmSync(path.join(this.root, name), { force: true });
  }
}

function signed(signature: SignatureCheck | undefined): { signature?: SignatureCheck } {
  return signature === undefined ? {} : { signature };
}

function safeList(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}
