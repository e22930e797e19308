/**
 * The receipt log: one JSON receipt per line in `<dataDir>/audit/receipts.jsonl`, appended with
 * `fsync` before the append returns, so a receipt is on disk before the mutation it guards starts.
 * Appends from several processes (the control plane, `svc secrets` on the host) are serialized by an
 * exclusive lock file, so each receipt links to the true previous one.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Where the receipt log lives under a data folder. */
export function receiptFile(dataDir: string): string {
  return path.join(dataDir, 'audit', 'receipts.jsonl');
}

const LOCK_WAIT_MS = 5_000;
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/** An append-only file of JSON lines. */
export class ReceiptFile {
  constructor(readonly file: string) {}

  /**
   * Appends the line `build` returns for the last stored line (undefined when empty), under the
   * lock, and syncs it to disk. Throws when the line cannot be written; nothing is then stored.
   */
  append(build: (last: string | undefined) => string): string {
    fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const release = this.#lock();
    try {
      const line = build(this.#lastLine());
      const fd = fs.openSync(this.file, 'a', 0o600);
      try {
        const size = fs.fstatSync(fd).size;
        try {
          fs.writeSync(fd, `${line}\n`);
          fs.fsyncSync(fd);
        } catch (error) {
          // A partial line would break every later read: cut it off again where the file allows.
          try {
            fs.ftruncateSync(fd, size);
          } catch {
            // The file cannot be cut (a device, say); the failed write wrote nothing there either.
          }
          throw error;
        }
      } finally {
        fs.closeSync(fd);
      }
      return line;
    } finally {
      release();
    }
  }

  /** Every stored line, oldest first (none when the file does not exist). */
  lines(): string[] {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    return text.split('\n').filter((line) => line.length > 0);
  }

  #lastLine(): string | undefined {
    let fd: number;
    try {
      fd = fs.openSync(this.file, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    try {
      const size = fs.fstatSync(fd).size;
      // Receipts are well under 4 KiB; read back far enough to hold the whole last one.
      let span = Math.min(size, 16_384);
      for (;;) {
        const buffer = Buffer.alloc(span);
        fs.readSync(fd, buffer, 0, span, size - span);
        const text = buffer.toString('utf8').replace(/\n+$/, '');
        const cut = text.lastIndexOf('\n');
        if (cut >= 0 || span === size) return text.slice(cut + 1) || undefined;
        span = Math.min(size, span * 4);
      }
    } finally {
      fs.closeSync(fd);
    }
  }

  /** Takes the lock file; a lock left by a process that died is taken over. */
  #lock(): () => void {
    const lock = `${this.file}.lock`;
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (;;) {
      try {
        fs.writeFileSync(lock, String(process.pid), { flag: 'wx', mode: 0o600 });
        return () => fs.rmSync(lock, { force: true });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      if (!holderAlive(lock)) {
        fs.rmSync(lock, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`the receipt log stayed locked for ${LOCK_WAIT_MS} ms (${lock})`);
      Atomics.wait(PAUSE, 0, 0, 5);
    }
  }
}

function holderAlive(lock: string): boolean {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(lock, 'utf8'));
  } catch {
    return true; // Being written or just removed: look again.
  }
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
