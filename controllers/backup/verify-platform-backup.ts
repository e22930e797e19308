/**
 * Verification of a platform backup: the archive is read back into a throwaway folder (decrypted
 * with the operator key) and every part is checked: the manifest, each file's SHA-256, each SQLite
 * copy's `PRAGMA integrity_check` and row counts against the counts taken at the copy, the apps
 * bundle (`git bundle verify`) and each PostgreSQL dump (`pg_restore --list`). The archive is good
 * only when this returns without throwing.
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  checkManifest,
  rowCountDifferences,
  type BackupManifest,
  type KnownSchemas,
} from '../../domain/backup/index.js';
import { UnprocessableError } from '../../domain/errors.js';
import { verifyBundle } from '../../platform/backup/apps-bundle.js';
import type { IoPace } from '../../platform/backup/archive-process.js';
import { hashFiles, readArchive, type ReadArchive } from '../../platform/backup/backup-archive.js';
import type { BackupKey } from '../../platform/backup/backup-key.js';
import type { PostgresTools } from '../../platform/postgres/postgres-tools.js';
import { checkDatabaseOffLoop } from '../../store/database-check.js';

/** Options of {@link unpackAndCheck}. */
export interface CheckArchiveOptions {
  readonly key: BackupKey | undefined;
  /** Folder to unpack into (created; the caller removes it). */
  readonly into: string;
  /** The newest schema per database file this release knows. */
  readonly known: KnownSchemas;
  /** Lists PostgreSQL dumps; absent: dumps are checked by checksum only. */
  readonly tools?: PostgresTools;
  /** How fast the unpacked files are written (docs/adr/0167). */
  readonly pace?: IoPace;
}

/**
 * Unpacks `file` into `options.into` and checks it whole; returns the manifest and the checks that
 * passed. Throws an UnprocessableError naming the first failed check.
 */
export async function unpackAndCheck(
  file: string,
  options: CheckArchiveOptions,
): Promise<{ manifest: BackupManifest; checks: string[] }> {
  const read = await readArchive(file, options.into, options.key, {
    write: true,
    ...(options.pace ? { pace: options.pace } : {}),
  });
  return checkUnpacked(options.into, options, [`read (${sealed(read)})`], read);
}

/**
 * The verification of a backup just written from `staging`: the archive `file` is read whole (decrypted)
 * and every file in it hashed, without writing it out (docs/adr/0167); each must match the manifest
 * read from the archive. The manifest's checksums were taken from the staged files, so the staged
 * files are byte for byte what the archive holds: the databases, the bundle and the dumps are checked
 * there. Where the archive had to be unpacked (a packaged build, on this thread), they are checked
 * in `options.into`.
 */
export async function checkArchiveOf(
  file: string,
  staging: string,
  options: CheckArchiveOptions,
): Promise<{ manifest: BackupManifest; checks: string[] }> {
  const read = await readArchive(file, options.into, options.key, {
    write: false,
    priority: 'background',
    ...(options.pace ? { pace: options.pace } : {}),
  });
  return checkUnpacked(read.unpacked ? options.into : staging, options, [`read whole (${sealed(read)})`], read);
}

function sealed(read: ReadArchive): string {
  return read.sealing === 'age' ? 'decrypted with age' : 'not encrypted';
}

/**
 * Checks a folder holding an unpacked (or staged) archive. With `read` (the archive as read), the
 * manifest is the archive's and each file's SHA-256 is the one taken as the archive was read; without
 * it, the folder's manifest and files are hashed (off this thread).
 */
export async function checkUnpacked(
  dir: string,
  options: Pick<CheckArchiveOptions, 'known' | 'tools'>,
  checks: string[] = [],
  read?: Pick<ReadArchive, 'entries' | 'manifest'>,
): Promise<{ manifest: BackupManifest; checks: string[] }> {
  let raw: unknown;
  try {
    raw = JSON.parse(read ? (read.manifest ?? '') : fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  } catch (cause) {
    throw new UnprocessableError('the archive has no readable manifest.json: it is not an svc platform backup', {
      code: 'not_a_backup',
      cause,
    });
  }
  const manifest = checkManifest(raw, options.known);
  for (const entry of manifest.files) {
    const at = path.join(dir, entry.path);
    if (!path.resolve(at).startsWith(path.resolve(dir) + path.sep))
      fail(`${entry.path} is listed in the manifest but missing from the archive`);
    if (!read && !fs.existsSync(at)) fail(`${entry.path} is listed in the manifest but missing from the archive`);
  }
  const sums = read
    ? manifest.files.map((f) => read.entries.find((e) => e.path === f.path))
    : await hashFiles(manifest.files.map((f) => path.join(dir, f.path)));
  manifest.files.forEach((entry, i) => {
    const sum = sums[i];
    if (sum === undefined) fail(`${entry.path} is listed in the manifest but missing from the archive`);
    if (sum.sha256 !== entry.sha256) fail(`${entry.path} does not match its SHA-256 in the manifest`);
  });
  checks.push(`${manifest.files.length} files match their SHA-256`);
  for (const db of manifest.databases) {
    const check = await checkDatabaseOffLoop(path.join(dir, db.name));
    if (check.integrity !== 'ok') fail(`${db.name}: integrity_check failed: ${check.integrity}`);
    const differences = rowCountDifferences(db.rows, check.rows);
    if (differences.length > 0) fail(`${db.name}: row counts differ: ${differences.slice(0, 5).join('; ')}`);
    const total = Object.values(check.rows).reduce((a, b) => a + b, 0);
    checks.push(`${db.name}: integrity_check ok, ${Object.keys(check.rows).length} tables and ${total} rows as copied`);
  }
  if (manifest.appsBundle !== null) {
    try {
      await verifyBundle(path.join(dir, manifest.appsBundle));
    } catch (cause) {
      fail(`the apps bundle does not verify: ${(cause as Error).message}`, cause);
    }
    checks.push('apps bundle verifies');
  }
  for (const pg of manifest.postgres) {
    if (!options.tools) continue;
    try {
      const toc = await options.tools.listDump(path.join(dir, pg.dump));
      checks.push(`${pg.dump} lists (${toc.split('\n').filter((l) => l !== '' && !l.startsWith(';')).length} entries)`);
    } catch (cause) {
      fail(`${pg.dump} does not list: ${(cause as Error).message}`, cause);
    }
  }
  return { manifest, checks };
}

function fail(message: string, cause?: unknown): never {
  throw new UnprocessableError(`the backup does not verify: ${message}`, {
    code: 'backup_damaged',
    ...(cause === undefined ? {} : { cause }),
  });
}
