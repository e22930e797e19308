/**
 * Bundles the commands whose start-up is dominated by loading many small modules into one file each
 * beside their compiled module (`dist/cli/commands/<name>.bundle.js`), which the command table loads
 * when present (ADR 0198). `svc validate` loads the YAML library (73 files), the spec rules (27) and
 * the schema validators: one bundle is read and compiled in one go. The bundle is the same code as
 * the compiled module, built from the same sources; the platform configuration, loaded only when
 * no path is given, stays a separate module.
 *
 * Run by `npm run build`, scripts/start.sh and scripts/test.sh after the TypeScript build;
 * `node --import tsx scripts/build-cli.ts [distDir]`.
 */
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { checkoutRoot } from './checkout-root.js';

const ROOT = checkoutRoot(import.meta.dirname);
const requireHere = createRequire(import.meta.url);

/** The commands bundled, by their module under `cli/commands/`. */
export const BUNDLED_COMMANDS: readonly string[] = ['validate'];

/** Builds every bundle into `distDir` (default `<checkout>/dist`). */
export async function buildCli(distDir = path.join(ROOT, 'dist')): Promise<void> {
  // The YAML library's ES module build: its Node entry is CommonJS, whose requires an ES bundle cannot keep.
  const yamlEsm = path.join(path.dirname(requireHere.resolve('yaml/package.json')), 'browser', 'index.js');
  for (const name of BUNDLED_COMMANDS) {
    await esbuild.build({
      entryPoints: [path.join(ROOT, 'cli', 'commands', `${name}.ts`)],
      outfile: path.join(distDir, 'cli', 'commands', `${name}.bundle.js`),
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'esm',
      logLevel: 'warning',
      alias: { yaml: yamlEsm },
      // CommonJS modules inside the bundle (Ajv's runtime parts) require Node's built-ins: an ES
      // module has no require, so the bundle makes one.
      banner: {
        js: "import { createRequire as svcCreateRequire } from 'node:module'; const require = svcCreateRequire(import.meta.url);",
      },
      // Loaded only when needed, from the compiled tree beside the bundle.
      plugins: [
        {
          name: 'platform-config-stays-a-module',
          setup(build) {
            build.onResolve({ filter: /\/platform\/config\.js$/ }, (args) => ({ path: args.path, external: true }));
          },
        },
      ],
    });
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  await buildCli(process.argv[2] === undefined ? undefined : path.resolve(process.argv[2]));
