/**
 * Managed app folders on disk: what exists where an install would write, and the atomic writes of a
 * plan (a new folder appears whole by rename; an existing folder's files are replaced one by one by
 * rename, the marker last).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../../platform/files/write-file-atomic.js';
import { ConflictError } from '../../domain/errors.js';
import {
  InstallAction,
  MARKER_FILE,
  type FolderPlan,
  type ManagedFile,
  type ObservedFolder,
} from '../../domain/observability/index.js';

/** Content standing for a path that is not a regular file (a folder, a link): never equal to generated content. */
const NOT_A_FILE = '\u0000not a regular file';
/** Largest file read when comparing; anything larger is an operator's file and never equal. */
const MAX_COMPARED_BYTES = 4 * 1024 * 1024;

/** What exists at `dir` for the paths an install cares about (`paths` and the marker). */
export function observeFolder(dir: string, paths: readonly string[]): ObservedFolder {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'absent', files: new Map() };
    throw error;
  }
  if (!stat.isDirectory()) return { kind: 'other', files: new Map() };
  const files = new Map<string, string>();
  for (const relative of new Set([...paths, MARKER_FILE])) {
    const file = path.join(dir, relative);
    let entry: fs.Stats;
    try {
      entry = fs.lstatSync(file);
    } catch {
      continue;
    }
    files.set(
      relative,
      entry.isFile() && entry.size <= MAX_COMPARED_BYTES ? fs.readFileSync(file, 'utf8') : NOT_A_FILE,
    );
  }
  return { kind: 'directory', files };
}

function writeFiles(dir: string, files: readonly ManagedFile[]): void {
  for (const file of files) {
    const target = path.resolve(dir, file.path);
    // Generated paths are fixed and relative; this guards against a future mistake, not input.
    if (!target.startsWith(`${path.resolve(dir)}${path.sep}`))
      throw new Error(`managed file ${file.path} leaves its folder`);
    writeFileAtomic(target, file.content);
  }
}

/**
 * Applies `plan` to the folder `name` under `appsDir`. A new folder is assembled under a dot-named
 * temporary folder (which the spec watcher ignores) and renamed into place, so the spec controller
 * never sees half of it; if the name appeared meanwhile, nothing is written and the caller gets a 409.
 */
export function applyFolderPlan(appsDir: string, name: string, plan: FolderPlan): void {
  const dir = path.join(appsDir, name);
  if (plan.action === InstallAction.create) {
    fs.mkdirSync(appsDir, { recursive: true });
    const tmp = path.join(appsDir, `.svc-install-${name}-${process.pid}-${randomBytes(4).toString('hex')}`);
    fs.mkdirSync(tmp);
    try {
      writeFiles(tmp, plan.writes);
      fs.renameSync(tmp, dir);
    } catch (error) {
      fs.rmSync(tmp, { recursive: true, force: true });
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST' || code === 'ENOTEMPTY') {
        throw new ConflictError(`${name}: the folder appeared while it was being installed; run the install again`, {
          code: 'managed_folder_modified',
          details: { service: name },
        });
      }
      throw error;
    }
    return;
  }
  if (plan.action !== InstallAction.update) return;
  try {
    writeFiles(dir, plan.writes);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EISDIR' || code === 'ENOTDIR' || code === 'EEXIST') {
      throw new ConflictError(`${name}: a folder stands where the install writes a file; move it away`, {
        code: 'managed_folder_modified',
        details: { service: name },
      });
    }
    throw error;
  }
}
