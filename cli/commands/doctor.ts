/**
 * `svc doctor`: checks what the platform needs on this host and prints each check with a fix;
 * exits 1 when something required is missing.
 */
import type { Command } from 'commander';
import { runDoctor } from '../../controllers/doctor/run-doctor.js';
import { doctorCheck, doctorReport, type DoctorCheck, type DoctorReport } from '../../domain/doctor/index.js';
import { ConfigError } from '../../domain/errors.js';
import { loadConfig } from '../../platform/config.js';

const MARK = { pass: 'ok  ', warn: 'warn', fail: 'FAIL', skip: 'skip' } as const;

function render(report: DoctorReport): string {
  const lines = report.checks.map(
    (c: DoctorCheck) => `${MARK[c.status]}  ${c.title}: ${c.detail}${c.fix ? `\n      fix: ${c.fix}` : ''}`,
  );
  const failed = report.checks.filter((c) => c.required && c.status === 'fail').length;
  const warned = report.checks.filter((c) => c.status === 'warn').length;
  lines.push(
    '',
    report.ok
      ? `ready: every required check passed${warned > 0 ? ` (${warned} warning(s))` : ''}`
      : `not ready: ${failed} required check(s) failed`,
  );
  return `${lines.join('\n')}\n`;
}

/** Registers `doctor`. */
export function registerDoctor(program: Command): void {
  program
    .command('doctor')
    .description(
      'Check this host for what the platform needs (Node, git, PostgreSQL, promtool, cgroups, ports, data folder, clock); exit 1 when something required is missing',
    )
    .option('--json', 'print the checks as JSON')
    .addHelpText('after', '\nReads the same SVC_* settings as `svc serve` (ports, data folder, PostgreSQL).')
    .action(async (opts: { json?: boolean }) => {
      let report: DoctorReport;
      try {
        report = await runDoctor({ config: loadConfig(process.env) });
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        report = doctorReport([
          doctorCheck({
            id: 'config',
            title: 'configuration (SVC_* variables)',
            required: true,
            status: 'fail',
            detail: error.message,
            fix: 'correct the variable named above',
          }),
        ]);
      }
      process.stdout.write(opts.json ? `${JSON.stringify(report, null, 2)}\n` : render(report));
      process.exitCode = report.ok ? 0 : 1;
    });
}
