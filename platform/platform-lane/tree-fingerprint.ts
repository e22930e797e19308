/**
 * The SHA-256 fingerprint of a release tree: every regular file's relative path and content, in
 * sorted order. Symbolic links count by their target text (the shared `node_modules` link is
 * part of the identity only as a name), and `release.json` (written after fingerprinting) is left
 * out.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** Files left out of the fingerprint. */
const EXCLUDED = new Set(['release.json']);

/** Hex SHA-256 over the tree under `root`. */
export async function treeFingerprint(root: string): Promise<string> {
  const hash = createHash('sha256');
  const walk = async (dir: string, rel: string): Promise<void> => {
    const entries = (await fs.promises.readdir(dir, { withFileTypes: true })).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
    for (const entry of entries) {
      const relPath = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (rel === '' && EXCLUDED.has(entry.name)) continue;
      const full = path.join(dir, entry.name);
      if (entry.isSymbolicLink()) {
        // node_modules is shared; only the fact of the link is hashed, not where it points.
        hash.update(`L ${relPath}\0`);
      } else if (entry.isDirectory()) {
        await walk(full, relPath);
      } else if (entry.isFile()) {
        const content = createHash('sha256')
          .update(await fs.promises.readFile(full))
          .digest('hex');
        hash.update(`F ${relPath}\0${content}\0`);
      }
    }
  };
  await walk(root, '');
  return hash.digest('hex');
}
