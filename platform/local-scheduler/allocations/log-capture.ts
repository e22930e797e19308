/**
 * Log capture: follows each allocation's stdout and stderr files (the task writes them directly,
 * as it always has, so capture never slows or blocks it) and hands complete lines, stamped with
 * app, process, allocation, release and stream, to the log sink in batches (docs/adr/0165).
 *
 * Reads start where the sink's committed offset says, so a driver restart neither loses nor
 * repeats lines, and an allocation that crashed or stopped is read to its end before it is left.
 * Bytes already captured are released from the files (hole punching), keeping the last
 * {@link KEEP_TAIL_BYTES} in place for execution records, so the files do not grow on disk.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import type { Logger } from 'pino';
import { MAX_LOG_LINE_CHARS, type CaptureOffset, type CapturedLine, type LogSink } from '../../../domain/logs/index.js';
import type { LogStream } from '../../../domain/logs/index.js';

/** Bytes read from a file at a time. */
const CHUNK_BYTES = 256 * 1024;
/** Lines that make a batch flush at once instead of at the end of the event-loop turn. */
const FLUSH_LINES = 5000;
/** Safety-net poll of every followed file (inotify can miss writes on some file systems). */
const POLL_MS = 1000;
/** Bytes left in place at a file's end when captured bytes are released. */
export const KEEP_TAIL_BYTES = 1024 * 1024;
/** Captured bytes that, once past, trigger a release of a file's captured part. */
const PUNCH_EVERY_BYTES = 8 * 1024 * 1024;

/** Who an allocation's lines belong to. */
export interface CaptureTarget {
  readonly allocation: string;
  readonly app: string;
  readonly process: string;
  readonly release: string;
  readonly files: Readonly<Record<LogStream, string>>;
}

function fileSize(file: string): number | undefined {
  try {
    return fs.statSync(file).size;
  } catch {
    return undefined;
  }
}

export interface LogCaptureOptions {
  readonly sink: LogSink;
  readonly logger: Logger;
}

class FollowedFile {
  offset: number;
  punchedTo = 0;
  current: Promise<void> | undefined;
  dirty = false;
  /**
   * Sizes of the file when its task exited, oldest first: a line unfinished there ends there (the
   * next run starts a new one). A list, since a task that crashes at once can exit again before the
   * first exit's bytes are read (a busy host), and each exit cuts its own line.
   */
  readonly cuts: number[] = [];
  watcher: fs.FSWatcher | undefined;
  constructor(
    readonly target: CaptureTarget,
    readonly stream: LogStream,
    readonly file: string,
    offset: number,
  ) {
    this.offset = offset;
  }
}

/** Follows allocation output files into the log sink. */
export class LogCapture {
  readonly #options: LogCaptureOptions;
  readonly #files = new Map<string, FollowedFile[]>();
  /** Allocations to leave once read to the end. */
  readonly #ending = new Set<string>();
  #lines: CapturedLine[] = [];
  #offsets = new Map<FollowedFile, number>();
  #flushScheduled = false;
  readonly #poll: NodeJS.Timeout;
  #closed = false;

  constructor(options: LogCaptureOptions) {
    this.#options = options;
    this.#poll = setInterval(() => {
      for (const files of this.#files.values()) for (const file of files) this.#read(file);
    }, POLL_MS);
    this.#poll.unref();
  }

  /** Starts following an allocation's files (no-op when already followed). */
  follow(target: CaptureTarget): void {
    if (this.#closed || this.#files.has(target.allocation)) return;
    const files = (['stdout', 'stderr'] as const).map((stream) => {
      const followed = new FollowedFile(
        target,
        stream,
        target.files[stream],
        this.#options.sink.offsetOf(target.allocation, stream) ?? 0,
      );
      return followed;
    });
    this.#files.set(target.allocation, files);
    for (const file of files) this.#read(file);
  }

  /**
   * The driver saw a change of a followed allocation: its task may have just created its files, or
   * exited (`taskExited`), which makes an unfinished last line a line of its own.
   */
  touch(allocation: string, taskExited = false): void {
    for (const file of this.#files.get(allocation) ?? []) {
      const size = taskExited ? fileSize(file.file) : undefined;
      if (size !== undefined && size > (file.cuts.at(-1) ?? file.offset)) file.cuts.push(size);
      this.#read(file);
    }
  }

  /** The allocation's task is gone: read its files to the end (a partial last line too), then leave them. */
  finish(allocation: string): void {
    if (!this.#files.has(allocation)) return;
    this.#ending.add(allocation);
    for (const file of this.#files.get(allocation)!) void this.#readNow(file);
  }

  /** True while `allocation`'s files are followed. */
  following(allocation: string): boolean {
    return this.#files.has(allocation);
  }

  /** Reads what every file has now and commits it; resolves when done (tests, shutdown). */
  async drain(): Promise<void> {
    const all = [...this.#files.values()].flat();
    await Promise.all(all.map((file) => this.#readNow(file)));
    this.#flush();
  }

  /** Stops following; commits what was read. */
  close(): void {
    this.#closed = true;
    clearInterval(this.#poll);
    for (const files of this.#files.values()) for (const file of files) file.watcher?.close();
    this.#files.clear();
    this.#flush();
  }

  #read(file: FollowedFile): void {
    this.#watch(file);
    void this.#readNow(file);
  }

  /** Wakes reads on writes (inotify); until the file exists, the poll and driver changes retry. */
  #watch(file: FollowedFile): void {
    if (file.watcher !== undefined || this.#closed || this.#ending.has(file.target.allocation)) return;
    try {
      file.watcher = fs.watch(file.file, { persistent: false }, () => this.#read(file));
      file.watcher.on('error', () => {
        file.watcher?.close();
        file.watcher = undefined;
      });
    } catch {
      // Not there yet: a later read tries again.
    }
  }

  /** Reads the file to its end; a call during a read makes that read go round once more. */
  #readNow(file: FollowedFile): Promise<void> {
    if (file.current !== undefined) {
      file.dirty = true;
      return file.current;
    }
    file.current = (async () => {
      try {
        do {
          file.dirty = false;
          await this.#readAvailable(file);
        } while (file.dirty && !this.#closed);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
          this.#options.logger.warn({ err: error, file: file.file }, 'log capture read failed');
      } finally {
        file.current = undefined;
      }
      this.#maybeLeave(file.target.allocation);
    })();
    return file.current;
  }

  async #readAvailable(file: FollowedFile): Promise<void> {
    const ending = this.#ending.has(file.target.allocation);
    // Most polls find nothing new: one stat, no descriptor and no buffer for them.
    if ((await fs.promises.stat(file.file)).size === file.offset) return;
    const handle = await fs.promises.open(file.file, 'r');
    try {
      const { size } = await handle.stat();
      // Truncated by someone else: start again at its beginning.
      if (size < file.offset) file.offset = 0;
      const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
      while (!this.#closed) {
        while (file.cuts.length > 0 && file.cuts[0]! <= file.offset) file.cuts.shift();
        const cut = file.cuts[0];
        const want = cut === undefined ? CHUNK_BYTES : Math.min(CHUNK_BYTES, cut - file.offset);
        const { bytesRead } = await handle.read(buffer, 0, want, file.offset);
        // Closed meanwhile: what close() committed is the offset the next driver starts from.
        if (bytesRead === 0 || this.#closed) break;
        // Whole lines only (so a character is never cut, and the committed offset is a line's
        // start); an unfinished last line waits for its end unless the task is gone.
        const end = buffer.lastIndexOf(10, bytesRead - 1);
        let take: number;
        if (end >= 0) take = end + 1;
        else if (bytesRead === CHUNK_BYTES || ending || (cut !== undefined && file.offset + bytesRead === cut))
          take = bytesRead;
        else break;
        this.#addText(file, buffer.toString('utf8', 0, take));
        file.offset += take;
        this.#offsets.set(file, file.offset);
        if (this.#lines.length >= FLUSH_LINES) this.#flush();
        else this.#scheduleFlush();
      }
    } finally {
      await handle.close();
    }
    if (file.offset - file.punchedTo - KEEP_TAIL_BYTES >= PUNCH_EVERY_BYTES) this.#release(file);
  }

  #addText(file: FollowedFile, text: string): void {
    const parts = text.split('\n');
    if (parts[parts.length - 1] === '') parts.pop();
    const at = Date.now();
    const { app, process, allocation, release } = file.target;
    for (const part of parts) {
      const line = part.endsWith('\r') ? part.slice(0, -1) : part;
      for (let start = 0; start === 0 || start < line.length; start += MAX_LOG_LINE_CHARS)
        this.#lines.push({
          at,
          app,
          process,
          allocation,
          release,
          stream: file.stream,
          line: line.slice(start, start + MAX_LOG_LINE_CHARS),
        });
    }
  }

  #maybeLeave(allocation: string): void {
    if (!this.#ending.has(allocation)) return;
    const files = this.#files.get(allocation);
    if (!files || files.some((file) => file.current !== undefined || file.dirty)) return;
    for (const file of files) file.watcher?.close();
    this.#files.delete(allocation);
    this.#ending.delete(allocation);
    this.#flush();
  }

  #scheduleFlush(): void {
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => {
      this.#flushScheduled = false;
      if (!this.#closed) this.#flush();
    });
  }

  #flush(): void {
    if (this.#lines.length === 0 && this.#offsets.size === 0) return;
    const lines = this.#lines;
    const offsets: CaptureOffset[] = [...this.#offsets].map(([file, offset]) => ({
      allocation: file.target.allocation,
      stream: file.stream,
      offset,
    }));
    this.#lines = [];
    this.#offsets = new Map();
    try {
      this.#options.sink.append(lines, offsets);
    } catch (error) {
      this.#options.logger.error({ err: error, lines: lines.length }, 'captured log lines could not be stored');
    }
  }

  /** Frees the disk blocks of captured bytes (offsets stay valid: the file keeps its size). */
  #release(file: FollowedFile): void {
    const upTo = Math.floor((file.offset - KEEP_TAIL_BYTES) / 4096) * 4096;
    if (upTo <= file.punchedTo) return;
    file.punchedTo = upTo;
    execFile('fallocate', ['--punch-hole', '--offset', '0', '--length', String(upTo), file.file], (error) => {
      if (error)
        this.#options.logger.debug({ err: error, file: file.file }, 'captured log bytes not released (fallocate)');
    });
  }
}
