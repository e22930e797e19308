/**
 * The receipt log: one JSON receipt per line in `<dataDir>/audit/receipts.jsonl`, on disk before the
 * mutation it guards starts: appended with `fsync` before the append returns, or appended and then
 * flushed by one `fdatasync` off the event loop shared by the appends made meanwhile (ADR 0194).
 * Appends from several processes (the control plane, `svc secrets` on the host) are serialized by an
 * exclusive lock file, so each receipt links to the true previous one.
 */
import fs from 'node:fs';
import path from 'node:path';
import { signalReaches } from '../host/signal-reaches.js';

/** Where the receipt log lives under a data folder. */
export function receiptFile(dataDir: string): string {
  return path.join(dataDir, 'audit', 'receipts.jsonl');
}

const LOCK_WAIT_MS = 5_000;
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/** An append-only file of JSON lines. */
export class ReceiptFile {
  constructor(readonly file: string) {}

  #group: {
    readonly build: (last: string | undefined) => string;
    readonly resolve: (line: string) => void;
    readonly reject: (error: unknown) => void;
  }[] = [];
  #flushing: Promise<void> | undefined;
  #flushNext: Promise<void> | undefined;

  /**
   * Appends the line `build` returns for the last stored line (undefined when empty), under the
   * lock, and syncs it to disk. Throws when the line cannot be written; nothing is then stored.
   */
  append(build: (last: string | undefined) => string): string {
    return this.#appendLines([build], true)[0]!;
  }

  /**
   * Appends like {@link append}, together with the other appends asked for in the same event-loop
   * turn (one lock, one read of the last line, one write), and resolves once one fdatasync on the
   * thread pool has put them on disk, instead of an fsync each on the event loop (ADR 0194).
   * Rejects when the lines could not be written (nothing of the group is then stored) or flushed.
   */
  appendDurably(build: (last: string | undefined) => string): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      this.#group.push({ build, resolve, reject });
      if (this.#group.length === 1) setImmediate(() => this.#writeGroup());
    });
  }

  #writeGroup(): void {
    const group = this.#group;
    this.#group = [];
    let lines: string[];
    try {
      lines = this.#appendLines(
        group.map((g) => g.build),
        false,
      );
    } catch (error) {
      for (const g of group) g.reject(error);
      return;
    }
    this.#flush().then(
      () => group.forEach((g, i) => g.resolve(lines[i]!)),
      (error: unknown) => {
        for (const g of group) g.reject(error);
      },
    );
  }

  /**
   * Flushes every line written before the call to disk: one fdatasync at a time; the calls made
   * while one runs share the next.
   */
  #flush(): Promise<void> {
    if (this.#flushNext) return this.#flushNext;
    if (!this.#flushing) {
      this.#flushing = this.#datasync().finally(() => {
        this.#flushing = undefined;
      });
      return this.#flushing;
    }
    this.#flushNext = this.#flushing
      .catch(() => undefined)
      .then(() => {
        this.#flushNext = undefined;
        return this.#flush();
      });
    return this.#flushNext;
  }

  async #datasync(): Promise<void> {
    const handle = await fs.promises.open(this.file, 'r');
    try {
      await handle.datasync();
    } finally {
      await handle.close();
    }
  }

  /** Appends the lines the builds return, each given the line before it, under the lock; fsynced with `sync`. */
  #appendLines(builds: readonly ((last: string | undefined) => string)[], sync: boolean): string[] {
    fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const release = this.#lock();
    try {
      let last = this.#lastLine();
      const lines = builds.map((build) => (last = build(last)));
      const fd = fs.openSync(this.file, 'a', 0o600);
      try {
        const size = fs.fstatSync(fd).size;
        try {
          fs.writeSync(fd, lines.map((line) => `${line}\n`).join(''));
          if (sync) fs.fsyncSync(fd);
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
      return lines;
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
  return signalReaches(pid);
}
