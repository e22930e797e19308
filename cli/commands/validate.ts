/**
 * `svc validate [paths...]`: validates spec files and prints one line per finding,
 * `file:line:col rule message`. Exits 1 when any finding is an error.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { CliError, ExitCode } from '../cli-error.js';
import YAML from 'yaml';
import { validateAppsDir, validateSpecFile, type FileValidation } from '../../controllers/validation/validate-apps.js';
import { DEPLOY_GROUPS_DIR } from '../../platform/spec-files.js';
import { ConfigError } from '../../domain/errors.js';
import { isSchedulerDriver, SchedulerDriver } from '../../domain/spec/rules/driver-rules.js';

/** The driver specs are checked for: `--driver`, else SVC_SCHEDULER_DRIVER, else local. */
function driverOf(option: string | undefined): SchedulerDriver {
  const value = option ?? (process.env.SVC_SCHEDULER_DRIVER || undefined) ?? SchedulerDriver.local;
  if (!isSchedulerDriver(value))
    throw new CliError(
      `${option !== undefined ? '--driver' : 'SVC_SCHEDULER_DRIVER'} must be local, kubernetes or swarm, got "${value}"`,
      ExitCode.usage,
    );
  return value;
}

function expand(target: string): string[] {
  const stat = fs.statSync(target, { throwIfNoEntry: false });
  if (!stat) throw new Error(`${target}: no such file or folder`);
  if (stat.isFile()) return [target];
  const direct = path.join(target, 'infraspec.yaml');
  if (fs.existsSync(direct)) return [direct];
  return fs
    .readdirSync(target, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && fs.existsSync(path.join(target, entry.name, 'infraspec.yaml')))
    .map((entry) => path.join(target, entry.name, 'infraspec.yaml'))
    .sort();
}

/** SVC_APPS_DIR as the platform reads it; the whole configuration is loaded only when no path is given. */
async function configuredAppsDir(): Promise<string> {
  const { loadConfig } = await import('../../platform/config.js');
  try {
    return loadConfig().appsDir;
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(`configuration error: ${error.message}`, ExitCode.failed);
    throw error;
  }
}

/** Renders one finding as `file:line:col rule message`. */
export function formatFindingLine(file: string, finding: FileValidation['findings'][number]): string {
  return `${file}:${finding.line ?? 0}:${finding.column ?? 0} ${finding.severity === 'warning' ? 'warning ' : ''}${finding.rule} ${finding.message}`;
}

/** Registers the `validate` command. */
export function registerValidate(program: Command): void {
  program
    .command('validate [paths...]')
    .description('Validate infraspec.yaml files (default: every spec under SVC_APPS_DIR); exits 1 on any error')
    .option('--fleet <file>', 'fleet document (YAML or JSON) enabling the node pool existence check')
    .option(
      '--driver <driver>',
      'scheduler driver to check for: local, kubernetes or swarm (default: SVC_SCHEDULER_DRIVER, else local)',
    )
    .option('--json', 'print the full result as JSON')
    .addHelpText(
      'after',
      '\nPaths may be spec files, app folders, or a folder of app folders.\nOutput: file:line:col rule message, one finding per line.',
    )
    .action(async (paths: string[], opts: { fleet?: string; json?: boolean; driver?: string }) => {
      const driver = driverOf(opts.driver);
      let fleetDocument: unknown;
      if (opts.fleet !== undefined) {
        try {
          fleetDocument = YAML.parse(fs.readFileSync(opts.fleet, 'utf8'));
        } catch (error) {
          throw new CliError(`--fleet ${opts.fleet}: ${(error as Error).message}`, ExitCode.usage);
        }
      }
      let results: FileValidation[];
      if (paths.length === 0) {
        const appsDir = await configuredAppsDir();
        results = [...validateAppsDir(appsDir, { fleetDocument, driver }).files].map((f) => ({
          ...f,
          file: path.join(path.relative(process.cwd(), appsDir) || '.', f.file),
        }));
      } else {
        let files: string[];
        try {
          files = paths.flatMap(expand);
        } catch (error) {
          throw new CliError((error as Error).message, ExitCode.usage);
        }
        results = files.map((file) => {
          const kind = path.basename(path.dirname(file)) === DEPLOY_GROUPS_DIR ? 'deploy-group' : 'app';
          const result = validateSpecFile(file, kind, { fleetDocument, driver });
          return { kind, key: file, file, valid: result.valid, findings: result.findings };
        });
      }
      if (opts.json) {
        process.stdout.write(JSON.stringify({ valid: results.every((r) => r.valid), files: results }, null, 2) + '\n');
      } else {
        for (const result of results)
          for (const finding of result.findings) process.stdout.write(formatFindingLine(result.file, finding) + '\n');
        const invalid = results.filter((r) => !r.valid).length;
        process.stderr.write(`${results.length} file(s) checked, ${invalid} invalid\n`);
      }
      if (results.some((r) => !r.valid)) process.exitCode = ExitCode.failed;
    });
}
