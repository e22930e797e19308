/**
 * Builds the two web pages (the operator console and the knowledge admin dashboard) from `web/`
 * into `dist/web/<page>/`: one bundled, minified script and style sheet per page with content
 * hashes in their names (`assets/main-<hash>.js`), an `index.html` that names them, and brotli and
 * gzip copies of every asset so the server sends the compressed bytes (docs/adr/0130).
 *
 * Run by `npm run build`, scripts/start.sh and scripts/test.sh; `node --import tsx scripts/build-web.ts [outDir]`.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { checkoutRoot } from './checkout-root.js';

const ROOT = checkoutRoot(import.meta.dirname);

/** One page: its folder under `web/` and its document title. */
interface WebPage {
  readonly name: string;
  readonly title: string;
}

/** The pages the build produces. */
export const WEB_PAGES: readonly WebPage[] = [
  { name: 'console', title: 'svc console' },
  { name: 'knowledge-admin', title: 'svc knowledge admin' },
];

/** Where assets are served from, on both listeners. */
export const ASSET_PREFIX = '/ui/assets/';

function indexHtml(page: WebPage, script: string, styles: readonly string[]): string {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="referrer" content="no-referrer">',
    // No favicon request (it would be a 404 on every load).
    '<link rel="icon" href="data:,">',
    `<title>${page.title}</title>`,
    ...styles.map((href) => `<link rel="stylesheet" href="${ASSET_PREFIX}${href}">`),
    `<script type="module" src="${ASSET_PREFIX}${script}"></script>`,
    '</head>',
    '<body>',
    '<div id="root"><main><p>Loading…</p><noscript>This page needs JavaScript.</noscript></main></div>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

function compressAssets(dir: string): void {
  for (const file of fs.readdirSync(dir)) {
    if (!/\.(js|css|svg)$/.test(file)) continue;
    const bytes = fs.readFileSync(path.join(dir, file));
    fs.writeFileSync(
      path.join(dir, `${file}.br`),
      zlib.brotliCompressSync(bytes, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }),
    );
    fs.writeFileSync(path.join(dir, `${file}.gz`), zlib.gzipSync(bytes, { level: 9 }));
  }
}

async function buildPage(page: WebPage, outDir: string): Promise<void> {
  const assets = path.join(outDir, page.name, 'assets');
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: { main: path.join(ROOT, 'web', page.name, 'main.ts') },
    bundle: true,
    format: 'esm',
    // A dynamic import() is its own chunk, loaded on use (the console's terminal); CSS stays in main.
    splitting: true,
    minify: true,
    sourcemap: false,
    target: ['es2022', 'chrome110', 'firefox115', 'safari16'],
    platform: 'browser',
    entryNames: '[name]-[hash]',
    chunkNames: 'chunk-[hash]',
    assetNames: '[name]-[hash]',
    outdir: assets,
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
    tsconfig: path.join(ROOT, 'web', 'tsconfig.json'),
  });
  const outputs = Object.keys(result.metafile.outputs).map((file) => path.basename(file));
  const script = Object.entries(result.metafile.outputs)
    .filter(([, output]) => output.entryPoint !== undefined)
    .map(([file]) => path.basename(file))
    .find((file) => file.endsWith('.js'));
  if (script === undefined) throw new Error(`web build of ${page.name} produced no script`);
  const styles = outputs.filter((file) => file.endsWith('.css'));
  compressAssets(assets);
  fs.writeFileSync(path.join(outDir, page.name, 'index.html'), indexHtml(page, script, styles));
}

/**
 * Builds every page into `outDir` (default `dist/web`). It builds into a sibling folder first and
 * renames it into place, so a server reading `outDir` never sees half a build.
 */
export async function buildWeb(outDir = path.join(ROOT, 'dist', 'web')): Promise<string> {
  const staging = `${outDir}.building-${process.pid}`;
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(staging, { recursive: true });
  try {
    for (const page of WEB_PAGES) await buildPage(page, staging);
    const old = `${outDir}.old-${process.pid}`;
    if (fs.existsSync(outDir)) fs.renameSync(outDir, old);
    fs.renameSync(staging, outDir);
    fs.rmSync(old, { recursive: true, force: true });
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
  return outDir;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = await buildWeb(process.argv[2] === undefined ? undefined : path.resolve(process.argv[2]));
  process.stdout.write(`web pages built into ${path.relative(process.cwd(), out) || '.'}\n`);
}
