/**
 * `svc install` and `svc uninstall`: put the platform on a host as a systemd service (a `svc` system
 * user, /var/lib/svc, /etc/svc/svc.env, /opt/svc/releases/<version> and `current`, the unit), and
 * take the service off again, leaving the data (docs/adr/0141).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { afterInstallHint, planInstall, planUninstall, type HostStep } from '../../domain/host-install/index.js';
import { HostInstallError } from '../../platform/errors.js';
import {
  applyHostSteps,
  readPlatformRelease,
  runningRelease,
  type StepReport,
} from '../../platform/host-install/index.js';
import { CliError, ExitCode } from '../cli-error.js';

interface HostOptions {
  readonly dryRun?: boolean;
  readonly root?: string;
  readonly release?: string;
}

const WIDTH = 'unchanged'.length;

function render(reports: readonly StepReport[], dryRun: boolean): string {
  return (
    reports
      .map(
        (r) =>
          `${(dryRun && !['unchanged', 'kept', 'skipped'].includes(r.outcome) ? `would be ${r.outcome}` : r.outcome).padEnd(dryRun ? WIDTH + 9 : WIDTH)}  ${r.detail}`,
      )
      .join('\n') + '\n'
  );
}

/** Runs `steps` as the options say and prints one line per step. */
function run(steps: readonly HostStep[], opts: HostOptions): StepReport[] {
  const root = path.resolve(opts.root ?? '/');
  if (root === '/' && !opts.dryRun && process.getuid?.() !== 0) {
    throw new CliError('this changes the host: run it as root (or look first with --dry-run)', ExitCode.failed);
  }
  if (root !== '/' && !fs.existsSync(root)) throw new CliError(`--root ${opts.root}: no such folder`, ExitCode.usage);
  let reports: StepReport[];
  try {
    reports = applyHostSteps(steps, { root, dryRun: opts.dryRun ?? false });
  } catch (error) {
    if (error instanceof HostInstallError)
      throw new CliError(`${error.message} (${error.code})`, ExitCode.failed, error.details);
    throw error;
  }
  const header = opts.dryRun
    ? `dry run: nothing is changed${root === '/' ? '' : ` (under ${root})`}\n`
    : root === '/'
      ? ''
      : `under ${root}\n`;
  process.stdout.write(header + render(reports, opts.dryRun ?? false));
  return reports;
}

/** Registers `install` and `uninstall`. */
export function registerInstall(program: Command): void {
  program
    .command('install')
    .description(
      'Install this release on the host as a systemd service (as root): svc user, /var/lib/svc, /etc/svc/svc.env, /opt/svc, the unit',
    )
    .option('--dry-run', 'print what would be done; change nothing')
    .option('--root <dir>', 'install into a tree under <dir> instead of / (no systemctl; for images and tests)')
    .option('--release <dir>', 'the unpacked release to install (default: the one this svc runs from)')
    .addHelpText('after', '\nIdempotent: a second run changes nothing. An existing /etc/svc/svc.env is kept as it is.')
    .action((opts: HostOptions) => {
      const from = opts.release ? path.resolve(opts.release) : runningRelease();
      if (!from)
        throw new CliError(
          'this svc does not run from a release: run the svc of an unpacked release (npm run package), or pass --release <dir>',
          ExitCode.usage,
        );
      let release;
      try {
        release = readPlatformRelease(from);
      } catch (error) {
        if (error instanceof HostInstallError) throw new CliError(error.message, ExitCode.usage, error.details);
        throw error;
      }
      process.stdout.write(
        `svc ${release.version} (${release.commit ?? 'no commit'}, ${release.target}) from ${from}\n`,
      );
      run(planInstall(release, from), opts);
      process.stdout.write(`\n${opts.dryRun ? 'after the install:\n' : ''}${afterInstallHint()}\n`);
    });
  program
    .command('uninstall')
    .description('Stop and remove the systemd service (as root); the data, settings, releases and svc user stay')
    .option('--dry-run', 'print what would be done; change nothing')
    .option('--root <dir>', 'uninstall from a tree under <dir> instead of /')
    .action((opts: HostOptions) => {
      run(planUninstall(), opts);
    });
}
