// tier: full
/**
 * The commands the build bundles into one file (scripts/build-cli.ts, ADR 0198) behave as their
 * compiled modules: the same findings, output and exit code, the platform configuration still loaded
 * from its own module when no path is given.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { buildCli } from '../../scripts/build-cli.js';
import { runSvc, SVC_FROM_SOURCE } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/repo.js';
import { tempDir } from '../helpers/temp-dir.js';

/**
 * Runs the bundled `svc validate` of `dist` on `args` as bin/svc.js does: commander from the checkout,
 * errors reported by the program's own `reportError` (the bundle imports the shared modules, here the
 * checkout's sources through tsx: a copy of `CliError` inside the bundle would not be recognized).
 */
function runBundled(dist: string, args: readonly string[], env: Record<string, string> = {}) {
  const script = path.join(dist, 'run.mjs');
  fs.writeFileSync(
    script,
    `import { Command } from ${JSON.stringify(path.join(REPO_ROOT, 'node_modules/commander/index.js'))};
import { reportError } from ${JSON.stringify(path.join(REPO_ROOT, 'cli/cli-error.ts'))};
const { registerValidate } = await import(${JSON.stringify(path.join(dist, 'cli/commands/validate.bundle.js'))});
const program = new Command().exitOverride();
registerValidate(program);
try {
  await program.parseAsync(process.argv.slice(2), { from: 'user' });
} catch (error) {
  process.exitCode = reportError(error, (text) => process.stderr.write(text), { stack: false });
}
`,
  );
  return spawnSync(process.execPath, ['--import', 'tsx', script, 'validate', ...args], {
    encoding: 'utf8',
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
  });
}

test('the bundled svc validate prints what the compiled command prints, and loads no YAML module file', async (t) => {
  const dist = tempDir(t);
  // As in the checkout, the tree's .js files are ES modules.
  fs.writeFileSync(path.join(dist, 'package.json'), '{ "type": "module" }\n');
  await buildCli(dist, { sharedFrom: REPO_ROOT });
  const bundle = path.join(dist, 'cli/commands/validate.bundle.js');
  t.true(fs.existsSync(bundle));
  t.false(/from ["']yaml["']|require\(["']yaml["']\)/.test(fs.readFileSync(bundle, 'utf8')), 'yaml is inside');

  const dir = tempDir(t);
  const bad = path.join(dir, 'infraspec.yaml');
  fs.writeFileSync(bad, 'name: demo\nprocesses:\n  web:\n    port: 8080\n    health:\n      interval: "10"\n');
  const samples = path.join(REPO_ROOT, 'fixtures/apps');
  // Findings, JSON, a usage error (exit 2: CliError), a missing path, and the configuration loaded
  // from its own module when no path is given (SVC_APPS_DIR of the samples).
  for (const args of [
    [bad],
    [samples],
    ['--json', bad],
    ['--driver', 'nomad', bad],
    [path.join(dir, 'none.yaml')],
    [],
  ]) {
    const env = { SVC_APPS_DIR: samples, SVC_LOG_LEVEL: 'silent' };
    const bundled = runBundled(dist, args, env);
    const compiled = await runSvc(['validate', ...args], { env: { ...env, SVC_FROM_SOURCE }, cwd: REPO_ROOT });
    t.is(bundled.status ?? -1, compiled.code ?? -2, args.join(' '));
    t.is(bundled.stdout, compiled.stdout, args.join(' '));
    t.is(bundled.stderr, compiled.stderr, args.join(' '));
  }
  t.is(runBundled(dist, [bad]).status, 1, 'an invalid spec exits 1');
  t.is(runBundled(dist, ['--driver', 'nomad', bad]).status, 2, 'a usage error exits 2');
});
