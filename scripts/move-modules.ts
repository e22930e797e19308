/**
 * Moves TypeScript modules to new paths and rewrites every relative import of the tree to match.
 *
 * Usage: `node --import tsx scripts/move-modules.ts <mapping.json>` where the mapping is
 * `{ "old/path.ts": "new/path.ts", ... }` relative to the repository root. Files are moved with
 * `git mv`, so history follows them. Only relative specifiers (`./x.js`, `../y/z.js`) are rewritten,
 * in static imports, re-exports, `import()` and `import type`.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const mappingFile = process.argv[2];
if (!mappingFile) {
  process.stderr.write('usage: move-modules.ts <mapping.json>\n');
  process.exit(2);
}
const mapping = JSON.parse(readFileSync(mappingFile, 'utf8')) as Record<string, string>;
const moves = new Map<string, string>(
  Object.entries(mapping).map(([from, to]) => [path.join(root, from), path.join(root, to)]),
);

const files = execFileSync('git', ['ls-files', '*.ts', '*.js', '*.mjs'], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .filter((f) => f && !f.startsWith('node_modules/'))
  .map((f) => path.join(root, f));

const specifier = /((?:from|import)\s*\(?\s*['"])(\.{1,2}\/[^'"]+)(['"])/g;

function toTs(p: string): string {
  return p.endsWith('.js') ? `${p.slice(0, -3)}.ts` : p;
}

for (const file of files) {
  const newFile = moves.get(file) ?? file;
  const text = readFileSync(file, 'utf8');
  const next = text.replace(specifier, (whole, pre: string, spec: string, post: string) => {
    const target = path.resolve(path.dirname(file), spec);
    const targetTs = toTs(target);
    const moved = moves.get(targetTs) ?? (moves.has(target) ? moves.get(target) : undefined);
    const finalTarget = moved ? (spec.endsWith('.js') ? `${moved.slice(0, -3)}.js` : moved) : target;
    if (!moved && newFile === file) return whole;
    let rel = path.relative(path.dirname(newFile), finalTarget);
    if (!rel.startsWith('.')) rel = `./${rel}`;
    return `${pre}${rel}${post}`;
  });
  if (next !== text) writeFileSync(file, next);
}

for (const [from, to] of moves) {
  mkdirSync(path.dirname(to), { recursive: true });
  execFileSync('git', ['mv', from, to], { cwd: root });
}
process.stdout.write(`moved ${moves.size} files\n`);
