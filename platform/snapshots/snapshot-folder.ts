/**
 * The local snapshot folder: dumps published with owner-only permissions, atomically and never
 * over an existing name; the inventory lists only regular files with valid snapshot names.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ConflictError, NotFoundError } from '../../domain/errors.js';
import {
  parseCompactTimestamp,
  parseSnapshotName,
  requireSnapshotName,
  type SnapshotName,
} from '../../domain/snapshots/index.js';

/** One dump in the inventory. */
export interface SnapshotEntry extends SnapshotName {
  readonly sizeBytes: number;
  /** ISO 8601 of the compact timestamp. */
  readonly createdAt: string;
}

/** The folder holding snapshot dumps (default `<working dir>/snapshots`). */
export class SnapshotFolder {
  constructor(readonly dir: string) {}

  #ensure(): void {
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    fs.chmodSync(this.dir, 0o700);
  }

  /** Every valid dump, newest first. Symbolic links, folders and other non-regular files are ignored. */
  list(): SnapshotEntry[] {
    if (!fs.existsSync(this.dir)) return [];
    const out: SnapshotEntry[] = [];
    for (const entry of fs.readdirSync(this.dir, { withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const name = parseSnapshotName(entry.name);
      if (!name) continue;
      const stat = fs.lstatSync(path.join(this.dir, entry.name));
      if (!stat.isFile()) continue;
      out.push({ ...name, sizeBytes: stat.size, createdAt: parseCompactTimestamp(name.timestamp)!.toISOString() });
    }
    return out.sort((a, b) => b.timestamp.localeCompare(a.timestamp) || a.filename.localeCompare(b.filename));
  }

  /** A private temporary path inside the folder (same file system, so publishing is a link). */
  incomingPath(): string {
    this.#ensure();
    return path.join(this.dir, `.incoming-${randomUUID()}.part`);
  }

  /** Publishes `tempFile` as `filename`: mode 0600, atomic, refusing to replace an existing dump. */
  publish(tempFile: string, filename: string): SnapshotEntry {
    requireSnapshotName(filename);
    this.#ensure();
    fs.chmodSync(tempFile, 0o600);
    const target = path.join(this.dir, filename);
    try {
      fs.linkSync(tempFile, target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new ConflictError(`snapshot ${filename} already exists; dumps are never overwritten`, {
          code: 'snapshot_exists',
          details: { filename },
        });
      }
      throw error;
    } finally {
      fs.rmSync(tempFile, { force: true });
    }
    const entry = this.list().find((e) => e.filename === filename);
    if (!entry) throw new Error(`published snapshot ${filename} is not in the inventory`);
    return entry;
  }

  /** The path of an existing dump; validates the name first so no request can escape the folder. */
  pathOf(filename: string): string {
    requireSnapshotName(filename);
    const file = path.join(this.dir, filename);
    const stat = fs.lstatSync(file, { throwIfNoEntry: false });
    if (!stat?.isFile())
      throw new NotFoundError(`snapshot ${filename} does not exist`, {
        code: 'snapshot_not_found',
        details: { filename },
      });
    return file;
  }

  /** Deletes a dump. */
  remove(filename: string): void {
    fs.rmSync(this.pathOf(filename));
  }
}
