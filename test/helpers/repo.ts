/**
 * Where the checkout is, for tests that read its files (fixtures, schemas, docs, goldens). A test runs
 * from its TypeScript source (`test/…`, `npx ava`) or compiled by `npm test` (`dist/test/…`, ADR 0158):
 * both find the same checkout, and the same source folder for the files kept beside a test.
 */
import fs from 'node:fs';
import path from 'node:path';

/** The checkout's root: the nearest folder above this one that holds package.json (dist/ holds none). */
export const REPO_ROOT = ((): string => {
  let dir = import.meta.dirname;
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${import.meta.dirname}`);
    dir = parent;
  }
  return dir;
})();

/** The source folder of a test folder: `<root>/dist/test/x` → `<root>/test/x`; a source folder as is. */
export function sourceDir(dir: string): string {
  const relative = path.relative(REPO_ROOT, dir);
  const compiled = relative.split(path.sep)[0] === 'dist';
  return compiled ? path.join(REPO_ROOT, relative.split(path.sep).slice(1).join(path.sep)) : dir;
}
