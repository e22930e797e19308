/**
 * Watches the apps folder (chokidar) and reports which app or deploy group changed, debounced per
 * key. It only names keys: the spec controller re-reads the file itself (level-based).
 */
import fs from 'node:fs';
import path from 'node:path';
import chokidar, { type FSWatcher } from 'chokidar';
import { DEPLOY_GROUPS_DIR, SPEC_FILE_NAME } from './spec-files.js';

/** A changed spec file: `app:<name>` or `group:<name>`. */
export type SpecKey = `app:${string}` | `group:${string}`;

export interface SpecWatcherOptions {
  /** Quiet period before a key is reported. @default 20 */
  readonly debounceMs?: number;
}

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

/** Starts watching; `onChange` receives debounced keys. Resolves once the watcher is ready. */
export async function watchSpecs(
  appsDir: string,
  onChange: (key: SpecKey) => void,
  options: SpecWatcherOptions = {},
): Promise<{ close(): Promise<void> }> {
  fs.mkdirSync(appsDir, { recursive: true });
  const debounceMs = options.debounceMs ?? 20;
  const timers = new Map<SpecKey, NodeJS.Timeout>();
  const report = (file: string) => {
    const key = specKeyOf(appsDir, file);
    if (!key) return;
    clearTimeout(timers.get(key));
    timers.set(
      key,
      setTimeout(() => {
        timers.delete(key);
        onChange(key);
      }, debounceMs),
    );
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
      for (const timer of timers.values()) clearTimeout(timer);
      await watcher.close();
    },
  };
}
