/**
 * Stand-in for the `sqlite-vec` package inside the release bundle: the loadable extension is the
 * one in the release folder, loaded by path (ADR 0140).
 */
import parts = require('./release-parts.cjs');

interface LoadsExtensions {
  loadExtension(file: string): unknown;
}

function getLoadablePath(): string {
  return parts.releasePart('vectorExtension');
}

function load(db: LoadsExtensions): void {
  db.loadExtension(getLoadablePath());
}

export = { getLoadablePath, load };
