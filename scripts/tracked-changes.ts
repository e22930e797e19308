/**
 * Whether a test run changed the checkout (ADR 0226): `scripts/test.sh` saves the state of the tree
 * before the tests (`--save FILE`) and compares after them (`--compare FILE`), failing the run when
 * a tracked file changed or an untracked, unignored file appeared. The state is `git status
 * --porcelain` with the content hash of every file it lists, so a file already modified before the
 * run and rewritten by it counts too. Outside a git checkout (an unpacked release) it says so and
 * passes.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Each changed or untracked path of the checkout at `root` with its status and content hash. */
export function treeState(root: string): Map<string, string> | undefined {
  const status = spawnSync('git', ['status', '--porcelain', '-z', '--untracked-files=all'], {
    cwd: root,
    encoding: 'utf8',
  });
  if (status.status !== 0) return undefined;
  const state = new Map<string, string>();
  for (const entry of status.stdout.split('\0')) {
    if (entry.length < 4) continue;
    const file = entry.slice(3);
    let hash = 'absent';
    try {
      const full = path.join(root, file);
      hash = fs.statSync(full).isFile() ? createHash('sha256').update(fs.readFileSync(full)).digest('hex') : 'folder';
    } catch {
      // Deleted.
    }
    state.set(file, `${entry.slice(0, 2)} ${hash}`);
  }
  return state;
}

/** Paths whose status or content differs between two states. */
export function changedPaths(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): string[] {
  const paths = new Set([...before.keys(), ...after.keys()]);
  return [...paths].filter((p) => before.get(p) !== after.get(p)).sort();
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [mode, file] = process.argv.slice(2);
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const state = treeState(root);
  if (mode === '--save' && file !== undefined) {
    fs.writeFileSync(file, JSON.stringify(state === undefined ? null : [...state]));
  } else if (mode === '--compare' && file !== undefined) {
    const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as [string, string][] | null;
    if (saved === null || state === undefined) {
      console.log('== checkout changes: not a git checkout, not checked');
    } else {
      const changed = changedPaths(new Map(saved), state);
      if (changed.length === 0) console.log('== checkout changes by the tests: none');
      else {
        console.log(
          `== checkout changes by the tests (a test must write only into its own folders): ${changed.join(', ')}`,
        );
        process.exitCode = 1;
      }
    }
  } else {
    console.error('usage: tracked-changes.ts --save FILE | --compare FILE');
    process.exitCode = 2;
  }
}
