/**
 * Transpiles every TypeScript module of the checkout into dist/ with esbuild, without type checking:
 * the same layout `tsc` emits (ADR 0158), in about two seconds instead of a minute, for the quick tier
 * (`npm run test:quick`, ADR 0226), whose test files then load without tsx's loader. JSON the code
 * imports (schemas/) is copied beside. `npm test` type checks and emits with `tsc` as before.
 */
import fs from 'node:fs';
import path from 'node:path';
import * as esbuild from 'esbuild';

const ROOT = path.resolve(import.meta.dirname, '..');
const SKIP = new Set(['node_modules', 'dist', '.git', 'web-dist']);

function sources(dir: string, out: string[] = []): string[] {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.') || SKIP.has(entry.name)) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) sources(full, out);
    else if (/\.(ts|mts)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

const started = performance.now();
const files = sources(ROOT);
await esbuild.build({
  entryPoints: files,
  outdir: path.join(ROOT, 'dist'),
  outbase: ROOT,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Node 20 reads `with { type: 'json' }`; esbuild's table for node20 would drop it.
  supported: { 'import-attributes': true },
  sourcemap: 'inline',
  logLevel: 'warning',
});
const schemas = path.join(ROOT, 'schemas');
fs.mkdirSync(path.join(ROOT, 'dist', 'schemas'), { recursive: true });
for (const file of fs.readdirSync(schemas).filter((f) => f.endsWith('.json')))
  fs.copyFileSync(path.join(schemas, file), path.join(ROOT, 'dist', 'schemas', file));
console.log(
  `== transpiled ${files.length} modules into dist/ in ${((performance.now() - started) / 1000).toFixed(1)} s`,
);
