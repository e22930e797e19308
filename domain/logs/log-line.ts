/**
 * App log lines: what the platform captures from each allocation's stdout and stderr, how a reader
 * asks for them, and the port through which a driver hands captured lines to the log store.
 */

/** The output streams of a task. */
export const LOG_STREAMS = ['stdout', 'stderr'] as const;
export type LogStream = (typeof LOG_STREAMS)[number];

/** Longest line kept, in characters: a longer line is split into several. */
export const MAX_LOG_LINE_CHARS = 16 * 1024;

/** One line an allocation printed, as captured (before the store numbers it). */
export interface CapturedLine {
  /** Capture time, Unix milliseconds. */
  readonly at: number;
  readonly app: string;
  /** The app's process (e.g. `web`, a cron or function process). */
  readonly process: string;
  readonly allocation: string;
  /** The release that allocation runs: the first 12 characters of its commit, else `v<job version>`. */
  readonly release: string;
  readonly stream: LogStream;
  readonly line: string;
}

/** A stored line: `id` grows with capture order across the whole store. */
export interface LogLine extends CapturedLine {
  readonly id: number;
}

/** How far a driver has read one stream of one allocation (bytes of its output file). */
export interface CaptureOffset {
  readonly allocation: string;
  readonly stream: LogStream;
  readonly offset: number;
}

/** Where a driver's log capture delivers lines; offsets commit with the lines, so nothing is stored twice. */
export interface LogSink {
  append(lines: readonly CapturedLine[], offsets: readonly CaptureOffset[]): void;
  /** The committed read offset of a stream, undefined when none was ever committed. */
  offsetOf(allocation: string, stream: LogStream): number | undefined;
}

/** Filters of a log read; every one optional but the app. */
export interface LogFilter {
  readonly app: string;
  readonly process?: string;
  readonly allocation?: string;
  readonly release?: string;
  readonly stream?: LogStream;
  /** Unix milliseconds, inclusive. */
  readonly since?: number;
  /** Unix milliseconds, exclusive. */
  readonly until?: number;
  /** Case-insensitive text the line contains. */
  readonly grep?: string;
}

/** A read: the newest `limit` matching lines, oldest first. */
export interface LogQuery extends LogFilter {
  readonly limit: number;
}

/** True when a (new) line passes `filter`: the same rules the store applies, used by followers. */
export function matchesLogFilter(line: CapturedLine, filter: LogFilter): boolean {
  if (line.app !== filter.app) return false;
  if (filter.process !== undefined && line.process !== filter.process) return false;
  if (filter.allocation !== undefined && line.allocation !== filter.allocation) return false;
  if (filter.release !== undefined && line.release !== filter.release) return false;
  if (filter.stream !== undefined && line.stream !== filter.stream) return false;
  if (filter.since !== undefined && line.at < filter.since) return false;
  if (filter.until !== undefined && line.at >= filter.until) return false;
  if (filter.grep !== undefined && !line.line.toLowerCase().includes(filter.grep.toLowerCase())) return false;
  return true;
}
