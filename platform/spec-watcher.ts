/**
 * Watches the apps folder (chokidar) and reports which app or deploy group changed, debounced per
 * key with an adaptive quiet period. It only names keys: the spec controller re-reads the file itself (level-based).
 */
import fs from 'node:fs';
import path from 'node:path';
import chokidar, { type FSWatcher } from 'chokidar';
import { DEPLOY_GROUPS_DIR, SPEC_FILE_NAME } from './spec-files.js';

/** A changed spec file: `app:<name>` or `group:<name>`. */
export type SpecKey = `app:${string}` | `group:${string}`;

export interface SpecWatcherOptions {
  /** Longest quiet period before a key is reported (what a key that was written in steps waits). @default 20 */
  readonly debounceMs?: number;
  /** First quiet period of a key (never more than `debounceMs`). @default 5 */
  readonly quietMs?: number;
}

/** An event this soon after its key was reported means the writer was not done: the key's quiet period doubles. */
const FOLLOW_UP_MS = 100;
/** A key quiet this long goes back to the short quiet period. */
const SETTLED_MS = 2_000;

/** Maps a path under the apps folder to the key it belongs to, if any. */
export function specKeyOf(appsDir: string, file: string): SpecKey | undefined {
  const rel = path.relative(appsDir, file).split(path.sep);
  if (rel.length === 2 && rel[0] === DEPLOY_GROUPS_DIR && /\.ya?ml$/.test(rel[1]!))
    return `group:${rel[1]!.replace(/\.ya?ml$/, '')}`;
  if (rel.length === 2 && rel[1] === SPEC_FILE_NAME && !rel[0]!.startsWith('.')) return `app:${rel[0]!}`;
  // A whole app folder removed or added.
  if (rel.length === 1 && rel[0] !== DEPLOY_GROUPS_DIR && rel[0] !== '' && !rel[0]!.startsWith('.'))
    return `app:${rel[0]!}`;
  return undefined;
}

/** Clock and timers of {@link adaptiveDebounce} (tests pass their own). */
export interface DebounceClock {
  now(): number;
  setTimer(fire: () => void, ms: number): unknown;
  clearTimer(timer: unknown): void;
}

const realClock: DebounceClock = {
  now: () => performance.now(),
  setTimer: (fire, ms) => setTimeout(fire, ms),
  clearTimer: (timer) => clearTimeout(timer as NodeJS.Timeout),
};

/**
 * Adaptive trailing edge per key (ADR 0195): a key is reported once it has been quiet for its quiet
 * period, `quietMs` (5 ms) at first; a save is one burst of events microseconds apart (chokidar
 * already turns an unlink followed by an add within 100 ms into a change). A key that gets an event
 * within 100 ms after its report (a writer that writes in steps) doubles its period up to
 * `debounceMs` (20 ms), so a slow writer costs at most two early reconciles (level-based: they read
 * the file as it is) before its saves are reported once; after 2 s of quiet the key starts short again.
 */
export function adaptiveDebounce<K>(
  onReport: (key: K) => void,
  options: SpecWatcherOptions = {},
  clock: DebounceClock = realClock,
): { event(key: K): void; close(): void } {
  const debounceMs = options.debounceMs ?? 20;
  const quietMs = Math.min(options.quietMs ?? 5, debounceMs);
  const keys = new Map<K, { timer?: unknown; quietMs: number; reportedAt: number }>();
  return {
    event(key) {
      const now = clock.now();
      let state = keys.get(key);
      if (state === undefined) {
        state = { quietMs, reportedAt: -Infinity };
        keys.set(key, state);
      } else if (state.timer === undefined) {
        const since = now - state.reportedAt;
        if (since < FOLLOW_UP_MS) state.quietMs = Math.min(debounceMs, state.quietMs * 2);
        else if (since > SETTLED_MS) state.quietMs = quietMs;
      }
      if (state.timer !== undefined) clock.clearTimer(state.timer);
      const current = state;
      current.timer = clock.setTimer(() => {
        current.timer = undefined;
        current.reportedAt = clock.now();
        onReport(key);
      }, current.quietMs);
    },
    close() {
      for (const state of keys.values()) if (state.timer !== undefined) clock.clearTimer(state.timer);
    },
  };
}

/** Starts watching; `onChange` receives debounced keys. Resolves once the watcher is ready. */
export async function watchSpecs(
  appsDir: string,
  onChange: (key: SpecKey) => void,
  options: SpecWatcherOptions = {},
): Promise<{ close(): Promise<void> }> {
  fs.mkdirSync(appsDir, { recursive: true });
  const debounce = adaptiveDebounce<SpecKey>(onChange, options);
  const report = (file: string) => {
    const key = specKeyOf(appsDir, file);
    if (key) debounce.event(key);
  };
  const watcher: FSWatcher = chokidar.watch(appsDir, {
    ignoreInitial: true,
    depth: 1,
    ignored: (file) => path.basename(file).startsWith('.') && file !== appsDir,
  });
  for (const event of ['add', 'change', 'unlink', 'addDir', 'unlinkDir'] as const) watcher.on(event, report);
  await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  return {
    async close() {
      debounce.close();
      await watcher.close();
    },
  };
}
