/**
 * `svc backup [--no-secrets]`, `svc backup list`: whole-platform backups through the control plane
 * (POST/GET /api/v1/platform/backups); `svc restore <archive>`: restores one onto the data folder
 * while the platform is stopped (run on the host, no API involved). ADR 0173.
 */
import type { Command } from 'commander';
import { apiGet, apiPost } from '../api-client.js';
import { CliError, ExitCode } from '../cli-error.js';
import { renderTable } from '../table.js';

interface BackupView {
  id: string;
  file: string;
  status: string;
  secrets: boolean;
  encrypted: boolean;
  bytes: number | null;
  sha256: string | null;
  trigger: string;
  createdAt: string;
  finishedAt: string | null;
  verification: string[];
  error: string | null;
  remoteKey: string | null;
}

function size(bytes: number | null): string {
  return bytes === null ? '-' : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** Registers `backup` and `restore`. */
export function registerBackup(program: Command): void {
  const backup = program
    .command('backup')
    .description(
      'Back up the whole platform now (svc backup), or list backups with their verification (svc backup list)',
    );
  backup
    .command('create', { isDefault: true })
    .description('Take a backup now: written, then verified by reading it back; exits 1 unless verified')
    .option(
      '--no-secrets',
      'leave credentials and secret settings out (needed without SVC_BACKUP_KEY; a restore issues new app database credentials)',
    )
    .option('--api <url>', 'control plane URL')
    .option('--json', 'print the API answer as JSON')
    .action(async (opts: { secrets: boolean; api?: string; json?: boolean }) => {
      const answer = await apiPost<{ backup: BackupView }>(
        '/api/v1/platform/backups',
        opts.secrets ? {} : { noSecrets: true },
        opts,
      );
      const b = answer.backup;
      if (opts.json) process.stdout.write(JSON.stringify(answer, null, 2) + '\n');
      else {
        process.stdout.write(
          `${b.id} ${b.status} ${b.file} (${size(b.bytes)}${b.encrypted ? ', encrypted' : ', no secrets'})\n`,
        );
        for (const line of b.verification) process.stdout.write(`  ${line}\n`);
      }
      if (b.status !== 'verified')
        throw new CliError(`backup ${b.id} is not good: ${b.error ?? b.status}`, ExitCode.failed, { backup: b.id });
    });
  backup
    .command('list')
    .description('List backups, newest first, each with its verification')
    .option('--api <url>', 'control plane URL')
    .option('--json', 'print the API answer as JSON')
    .action(async (opts: { api?: string; json?: boolean }) => {
      const answer = await apiGet<{ backups: BackupView[] }>('/api/v1/platform/backups', opts);
      if (opts.json) return void process.stdout.write(JSON.stringify(answer, null, 2) + '\n');
      process.stdout.write(
        renderTable(
          ['ID', 'STATUS', 'CREATED', 'SIZE', 'SECRETS', 'TRIGGER', 'VERIFICATION'],
          answer.backups.map((b) => [
            b.id,
            b.status,
            b.createdAt,
            size(b.bytes),
            b.secrets ? 'encrypted' : 'left out',
            b.trigger,
            b.status === 'verified' ? `${b.verification.length} checks passed` : (b.error ?? '-'),
          ]),
        ),
      );
    });
  program
    .command('restore <archive>')
    .description(
      'Restore a platform backup onto the data folder (the platform stopped); a folder holding a platform is kept as the pre-restore backup and needs --yes',
    )
    .option('--data <dir>', 'data folder (overrides SVC_DATA_DIR)')
    .option('--apps <dir>', 'apps folder (overrides SVC_APPS_DIR)')
    .option('--key <key>', 'the backup key (overrides SVC_BACKUP_KEY): an age identity, a passphrase, or @file')
    .option('--yes', 'replace a data folder that holds a platform')
    .option('--json', 'print the report as JSON')
    .action(
      async (archive: string, opts: { data?: string; apps?: string; key?: string; yes?: boolean; json?: boolean }) => {
        const [{ loadConfig }, { createLogger }, { restorePlatformFromArchive }] = await Promise.all([
          import('../../platform/config.js'),
          import('../../platform/logger.js'),
          import('../../wiring/control/platform-backups.js'),
        ]);
        let config;
        try {
          config = loadConfig({
            ...process.env,
            ...(opts.data ? { SVC_DATA_DIR: opts.data } : {}),
            ...(opts.apps ? { SVC_APPS_DIR: opts.apps } : {}),
          });
        } catch (error) {
          throw new CliError(`configuration error: ${(error as Error).message}`, ExitCode.failed);
        }
        const logger = createLogger({ level: 'warn', base: { pid: process.pid } });
        try {
          const report = await restorePlatformFromArchive(config, logger, {
            archive,
            key: opts.key,
            yes: opts.yes === true,
            progress: (line) => process.stderr.write(`${line}\n`),
          });
          if (opts.json) return void process.stdout.write(JSON.stringify(report, null, 2) + '\n');
          process.stdout.write(
            [
              `restored backup ${report.backupId} (${report.createdAt}) onto ${report.dataDir}`,
              `  databases: ${report.databases.join(', ')}`,
              `  app databases: ${report.appDatabases.join(', ') || 'none'}${report.newCredentials ? ' (new credentials: the backup had no secrets)' : ''}`,
              ...(report.hostedDir
                ? [`  PostgreSQL and app folders (outside the data folder, named in it): ${report.hostedDir}`]
                : []),
              `  platform keys: ${report.keys.join(', ') || 'none in the backup'}`,
              ...(report.appUsers.length > 0
                ? [`  app users: ${report.appUsers.map((u) => `${u.name} ${u.result}`).join(', ')}`]
                : []),
              ...(report.stoppedApps.length > 0
                ? [
                    `  stopped the replaced platform's apps (svc serve starts the restored ones): ${report.stoppedApps.join(', ')}`,
                  ]
                : []),
              ...(report.stoppedPostgres !== null
                ? [`  stopped the replaced platform's PostgreSQL server (pid ${report.stoppedPostgres})`]
                : []),
              ...(report.preRestore ? [`  the replaced data folder is kept at ${report.preRestore}`] : []),
              ...(report.settingsFile ? [`  settings in force at the backup: ${report.settingsFile}`] : []),
              '',
            ].join('\n'),
          );
        } catch (error) {
          const code = (error as { code?: unknown }).code;
          if (typeof code === 'string' && /^[a-z_]+$/.test(code))
            throw new CliError(`${(error as Error).message} (${code})`, ExitCode.failed);
          throw error;
        }
      },
    );
}
