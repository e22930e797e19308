/**
 * Stand-in for the `bindings` package inside the release bundle: better-sqlite3 asks it for
 * `better_sqlite3.node`, and it loads the addon from the release folder by path (ADR 0140).
 */
import parts = require('./release-parts.cjs');

function bindings(name: string): unknown {
  if (name !== 'better_sqlite3.node') throw new Error(`the release carries no native addon named ${name}`);
  const addon = { exports: {} };
  process.dlopen(addon, parts.releasePart('sqliteAddon'));
  return addon.exports;
}

export = bindings;
