/**
 * Stand-in for node-pty's `lib/utils.js` inside the release bundle: node-pty looks for `pty.node`
 * beside its own files, which a single executable does not have; this loads the addon from the
 * release folder by path (ADR 0140).
 */
import path = require('node:path');
import parts = require('./release-parts.cjs');

function assign(target: Record<string, unknown>, ...sources: Record<string, unknown>[]): Record<string, unknown> {
  for (const source of sources) for (const key of Object.keys(source)) target[key] = source[key];
  return target;
}

function loadNativeModule(name: string): { dir: string; module: unknown } {
  if (name !== 'pty') throw new Error(`the release carries no native addon named ${name}.node`);
  const file = parts.releasePart('ptyAddon');
  const addon = { exports: {} };
  process.dlopen(addon, file);
  return { dir: path.dirname(file), module: addon.exports };
}

export = { assign, loadNativeModule };
