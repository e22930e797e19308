/**
 * The checkout's root folder, for scripts run from their sources (`scripts/…`) or compiled by
 * `npm test` (`dist/scripts/…`, ADR 0158): the nearest folder above that holds package.json.
 */
import fs from 'node:fs';
import path from 'node:path';

export function checkoutRoot(from: string): string {
  let dir = from;
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${from}`);
    dir = parent;
  }
  return dir;
}
