/**
 * The one atomic file write: the text goes to a dot-named temporary file in the same folder (which
 * the spec watcher ignores), is fsynced, renamed over the target, and the folder is fsynced, so a
 * reader (the spec controller, the edge daemon, a restarted driver) sees the old file or the new
 * one, never half of one, even after a crash.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** Writes `text` to `file` atomically; `mode` applies to a newly created file (before the umask). */
export function writeFileAtomic(file: string, text: string, mode = 0o644): void {
  const dir = path.dirname(file);
  fs.mkdirSync(dir, { recursive: true });
  const temp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const fd = fs.openSync(temp, 'wx', mode);
  try {
    fs.writeFileSync(fd, text);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.renameSync(temp, file);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
  const dirFd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(dirFd);
  } finally {
    fs.closeSync(dirFd);
  }
}
