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

/**
 * Modules the bundles import from the compiled tree instead of holding a copy: the program's own
 * (`cli/main.js` reports a `CliError` by its class, and a copy would be another class), those with
 * errors checked by class across the boundary, and the platform configuration, loaded only when needed.
 */
export const SHARED_MODULES: readonly string[] = ['cli/cli-error', 'domain/errors', 'platform/config'];

/** Options of {@link buildCli}. */
export interface BuildCliOptions {
  /**
   * The tree the shared modules are imported from, as absolute paths (tests: the checkout's sources,
   * run through tsx). @default the compiled tree the bundle sits in, by relative paths
   */
  readonly sharedFrom?: string;
}

/** Builds every bundle into `distDir` (default `<checkout>/dist`). */
export async function buildCli(distDir = path.join(ROOT, 'dist'), options: BuildCliOptions = {}): Promise<void> {
  // The YAML library's ES module build: its Node entry is CommonJS, whose requires an ES bundle cannot keep.
  const yamlEsm = path.join(path.dirname(requireHere.resolve('yaml/package.json')), 'browser', 'index.js');
  for (const name of BUNDLED_COMMANDS) {
    const outfile = path.join(distDir, 'cli', 'commands', `${name}.bundle.js`);
    await esbuild.build({
      entryPoints: [path.join(ROOT, 'cli', 'commands', `${name}.ts`)],
      outfile,
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
      plugins: [
        {
          name: 'shared-modules-stay-modules',
          setup(build) {
            build.onResolve({ filter: /^\.\.?\/.*\.js$/ }, (args) => {
              const module = path.relative(ROOT, path.resolve(args.resolveDir, args.path)).replace(/\.js$/, '');
              if (!SHARED_MODULES.includes(module)) return undefined;
              const target =
                options.sharedFrom === undefined
                  ? `./${path.relative(path.dirname(outfile), path.join(distDir, `${module}.js`))}`
                  : path.join(options.sharedFrom, `${module}.js`);
              return { path: target, external: true };
            });
          },
        },
      ],
    });
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  await buildCli(process.argv[2] === undefined ? undefined : path.resolve(process.argv[2]));
