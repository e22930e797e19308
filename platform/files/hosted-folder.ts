/**
 * The hosted folder: where what other system users must reach lives (the managed PostgreSQL cluster,
 * app releases and app data), when the data folder itself is out of their reach (ADR 0157).
 *
 * As root, apps run as their own users and PostgreSQL as `postgres`; both open their folders by path,
 * so every folder above them must be enterable. A checkout under `/root` (0700 on Debian), or a data
 * folder under a private `mktemp -d`, is not. Rather than ask the operator to open their home, the
 * platform then keeps those subfolders in a folder of its own, `/var/lib/svc-hosted/<id>`, one per
 * data folder, named in the data folder's `hosted-folder` file. Each moved subfolder is a symbolic
 * link in the data folder, so every documented path (`<data>/secrets/<app>`, `<data>/postgres`) still
 * works for the operator and for the platform's own code, which runs as root. The data folder itself
 * stays private.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { firstBlockedFolder } from '../postgres/managed-postgres-layout.js';
import { runningAsRoot } from '../postgres/postgres-os-user.js';

/** Where hosted folders are created by default. */
export const HOSTED_ROOT = '/var/lib/svc-hosted';
/** The file in the data folder that names its hosted folder. */
export const HOSTED_MARKER = 'hosted-folder';
/** The file in a hosted folder that names its data folder (so a folder left by a deleted data folder is known). */
export const HOSTED_OWNER = 'data-folder';
/**
 * The data folder's subfolders that live in the hosted folder: the ones other users reach
 * (`postgres`, `releases`, `app-data`, `regions`) and the app-hosting state beside them, so that the
 * scheduler and the deploy pipeline keep one folder of their own.
 */
export const HOSTED_SUBFOLDERS = [
  'postgres',
  'releases',
  'app-data',
  'regions',
  'scheduler',
  'repos',
  'mirrors',
  'work',
  'secrets',
  'secret-sources',
  'keys',
  'edge',
] as const;

/** Modes of the subfolders made in a hosted folder: passages enterable, PostgreSQL's its own, the rest private. */
const SUBFOLDER_MODES: Readonly<Record<string, number>> = {
  postgres: 0o755,
  releases: 0o711,
  'app-data': 0o711,
  regions: 0o711,
};

/** The user every app user is at least: passage for it means passage for any user. */
const NOBODY = { name: 'nobody', uid: 65534, gid: 65534 };

/** Where the app-hosting folders of a data folder are. */
export interface HostedFolder {
  /** The folder holding the app-hosting subfolders: the data folder itself, or the hosted folder. */
  readonly path: string;
  /** True when it is a folder of its own outside the data folder. */
  readonly separate: boolean;
  /** Why: for `svc doctor` and the start log. */
  readonly reason: string;
}

/** Options of {@link resolveHostedFolder}. */
export interface HostedFolderOptions {
  /** Where a new hosted folder is created. @default HOSTED_ROOT */
  readonly root?: string;
  /** The first folder on the way to `dir` other users cannot enter. @default a check as `nobody` (root only) */
  readonly blockedFolder?: (dir: string) => string | undefined;
  /** The name a new hosted folder starts with. @default the data folder's name */
  readonly name?: string;
}

/** The hosted folder the data folder names, without creating anything; undefined when it names none. */
export function readHostedFolder(dataDir: string): string | undefined {
  try {
    const named = fs.readFileSync(path.join(dataDir, HOSTED_MARKER), 'utf8').trim();
    return named === '' ? undefined : named;
  } catch {
    return undefined;
  }
}

/**
 * Where the app-hosting folders of `dataDir` live, creating the hosted folder (and moving any of
 * those subfolders an earlier start left in the data folder) when other users cannot reach the
 * data folder. Idempotent: later starts find the folder the data folder names.
 */
export function resolveHostedFolder(dataDir: string, options: HostedFolderOptions = {}): HostedFolder {
  const data = path.resolve(dataDir);
  fs.mkdirSync(data, { recursive: true });
  const named = readHostedFolder(data);
  if (named !== undefined) {
    linkSubfolders(data, named);
    // A data folder moved or renamed (a restore sets the replaced one aside) claims its folder again.
    claimHostedFolder(data);
    return { path: named, separate: true, reason: `named in ${path.join(data, HOSTED_MARKER)}` };
  }
  if (!runningAsRoot() && options.blockedFolder === undefined)
    return { path: data, separate: false, reason: 'not root: apps and PostgreSQL run as the platform user' };
  const blocked = (options.blockedFolder ?? ((dir: string) => firstBlockedFolder(dir, NOBODY)))(data);
  if (blocked === undefined) return { path: data, separate: false, reason: 'other users can enter the data folder' };
  const root = options.root ?? HOSTED_ROOT;
  fs.mkdirSync(root, { recursive: true, mode: 0o755 });
  fs.chmodSync(root, 0o755);
  const hosted = fs.mkdtempSync(path.join(root, `${safeName(options.name ?? path.basename(data))}-`));
  fs.chmodSync(hosted, 0o711);
  fs.writeFileSync(path.join(hosted, HOSTED_OWNER), `${data}\n`, { mode: 0o600 });
  linkSubfolders(data, hosted);
  // Named last, atomically: a start interrupted before this line leaves an unnamed folder, and the
  // next start makes a new one and moves the subfolders (the links) again.
  const marker = path.join(data, HOSTED_MARKER);
  const temporary = `${marker}.${crypto.randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(temporary, `${hosted}\n`, { mode: 0o600 });
  fs.renameSync(temporary, marker);
  return {
    path: hosted,
    separate: true,
    reason: `other users cannot enter ${blocked}: PostgreSQL and app folders live in ${hosted}`,
  };
}

/**
 * Makes each hosted subfolder of `data` a link into `hosted`: an existing folder is moved there
 * first (an earlier start's, or a link into another hosted folder is replaced).
 */
function linkSubfolders(data: string, hosted: string): void {
  fs.mkdirSync(hosted, { recursive: true, mode: 0o711 });
  for (const name of HOSTED_SUBFOLDERS) {
    const link = path.join(data, name);
    const target = path.join(hosted, name);
    const stat = lstatOrUndefined(link);
    if (stat?.isSymbolicLink()) {
      if (fs.readlinkSync(link) === target) continue;
      const previous = path.resolve(data, fs.readlinkSync(link));
      if (!fs.existsSync(target) && fs.existsSync(previous)) moveFolder(previous, target);
      fs.unlinkSync(link);
    } else if (stat?.isDirectory()) {
      if (fs.existsSync(target)) throw new Error(`${link} and ${target} both exist: keep one and remove the other`);
      moveFolder(link, target);
    } else if (stat) {
      throw new Error(`${link} is not a folder`);
    }
    if (!fs.existsSync(target)) fs.mkdirSync(target, { mode: SUBFOLDER_MODES[name] ?? 0o700 });
    fs.symlinkSync(target, link);
  }
}

function moveFolder(from: string, to: string): void {
  try {
    fs.renameSync(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    fs.cpSync(from, to, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });
    fs.rmSync(from, { recursive: true, force: true });
  }
}

function lstatOrUndefined(target: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(target);
  } catch {
    return undefined;
  }
}

/** A folder-name-safe form of the data folder's name, for the operator reading `/var/lib/svc-hosted`. */
function safeName(name: string): string {
  return (
    name
      .replace(/[^A-Za-z0-9_-]/g, '_')
      .replace(/^_+/, '')
      .slice(0, 40) || 'data'
  );
}

/** Writes, in the hosted folder `dataDir` names (if any), that `dataDir` is its data folder. */
export function claimHostedFolder(dataDir: string): void {
  const data = path.resolve(dataDir);
  const named = readHostedFolder(data);
  if (named === undefined || !fs.existsSync(named)) return;
  const owner = path.join(named, HOSTED_OWNER);
  let current: string | undefined;
  try {
    current = fs.readFileSync(owner, 'utf8').trim();
  } catch {
    current = undefined;
  }
  if (current !== data) fs.writeFileSync(owner, `${data}\n`, { mode: 0o600 });
}

/**
 * Hosted folders under `root` left by a data folder that is gone: the data folder they name no longer
 * exists or names another hosted folder. A folder that names no data folder (made before the name was
 * kept) is not listed: nothing tells whose it is.
 */
export function orphanedHostedFolders(root = HOSTED_ROOT): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(root);
  } catch {
    return [];
  }
  const orphans: string[] = [];
  for (const name of names) {
    const hosted = path.join(root, name);
    let owner: string;
    try {
      owner = fs.readFileSync(path.join(hosted, HOSTED_OWNER), 'utf8').trim();
    } catch {
      continue;
    }
    if (!fs.existsSync(owner)) {
      orphans.push(hosted);
      continue;
    }
    const named = readHostedFolder(owner);
    // Named once the links are made: a data folder still being set up names none yet.
    if (named !== undefined && path.resolve(named) !== path.resolve(hosted)) orphans.push(hosted);
  }
  return orphans.sort();
}
