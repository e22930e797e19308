/**
 * The platform's data folder, closed to app users: apps run as their own users (ADR 0047) and must
 * reach their release, allocation and data folders below it, but nothing of the platform's own
 * (control.db, knowledge.db, the scheduler state with every task's environment, repository mirrors,
 * checkouts, secrets, the edge credentials, snapshots kept there).
 */
import fs from 'node:fs';
import path from 'node:path';

/**
 * Folders apps pass through: enterable, not listable (0711). Below them each app's own folder is
 * opened to that app alone by the local driver; `postgres` is the managed server's, who sets its modes.
 */
const PASSAGES = new Set(['releases', 'allocs', 'app-data', 'regions']);
const MANAGED_ELSEWHERE = new Set(['postgres']);
/** Folders created now, private, so that what is written below them later is private too. */
const PRIVATE_FOLDERS = ['scheduler', 'repos', 'mirrors', 'work', 'secrets', 'edge'];

/**
 * Sets the data folder to 0711 (enter, not list), its passages to 0711, and removes group and other
 * permissions from everything else at its top level (files such as control.db and its WAL, and
 * folders, which then hide what they hold). Creates the platform's private folders (0700) first.
 * Returns what it changed, as `path: old -> new` lines.
 */
export function secureDataFolder(dataDir: string): string[] {
  const changed: string[] = [];
  const setMode = (target: string, mode: number): void => {
    const current = fs.lstatSync(target).mode & 0o7777;
    if (current === mode) return;
    fs.chmodSync(target, mode);
    changed.push(`${target}: ${current.toString(8)} -> ${mode.toString(8)}`);
  };
  fs.mkdirSync(dataDir, { recursive: true });
  setMode(dataDir, 0o711);
  for (const name of PRIVATE_FOLDERS) fs.mkdirSync(path.join(dataDir, name), { recursive: true, mode: 0o700 });
  for (const entry of fs.readdirSync(dataDir, { withFileTypes: true })) {
    if (entry.isSymbolicLink() || MANAGED_ELSEWHERE.has(entry.name)) continue;
    const target = path.join(dataDir, entry.name);
    const mode = fs.lstatSync(target).mode & 0o7777;
    if (entry.isDirectory() && PASSAGES.has(entry.name)) setMode(target, 0o711);
    else setMode(target, mode & ~0o077);
  }
  return changed;
}
