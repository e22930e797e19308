/**
 * `svc migrations`: an app's declared migrations run alone, outside a deploy, over the versioned
 * API (`POST /api/v1/apps/{id}/migrations`). `run` needs `--yes` (it changes the database), sends a
 * fresh Idempotency-Key (or the one given), queues a durable `app.migrate` operation and waits for
 * its receipt. A client command: it imports nothing of the server.
 */
import crypto from 'node:crypto';
import type { Command } from 'commander';
import { apiPost, type ApiClientOptions } from '../api-client.js';
import { CliError, ExitCode } from '../cli-error.js';
import { waitForOperation, type OperationView } from '../operation-wait.js';

interface RunOptions extends ApiClientOptions {
  ref: string;
  yes?: boolean;
  wait: boolean;
  json?: boolean;
  idempotencyKey?: string;
}

interface MigrationReceiptView {
  database?: string;
  commit?: string;
  ref?: string;
  preMigrationSnapshot?: string;
  applied?: string[];
  alreadyApplied?: string[];
}

function out(text: string): void {
  process.stdout.write(text);
}

/** A git ref as the API accepts it: no spaces and none of `~^:?*[\`. */
function parseRef(raw: string): string {
  if (!/^[^\s~^:?*[\\]{1,255}$/.test(raw))
    throw new CliError(
      `--ref must be a branch, tag or commit without spaces or ~^:?*[\\, not "${raw}"`,
      ExitCode.usage,
    );
  return raw;
}

/** Registers `migrations` and its subcommand `run`. */
export function registerMigrations(program: Command): void {
  const migrations = program
    .command('migrations')
    .description("An app's declared migrations run alone, outside a deploy (a durable app.migrate operation)");

  migrations
    .command('run <app>')
    .description(
      "Apply the app's migrations folder at a git ref, after a premigrate snapshot, and wait for the receipt; needs --yes",
    )
    .option('--ref <ref>', 'git ref of the apps repository whose migrations run', parseRef, 'HEAD')
    .option('--yes', 'confirm: the migrations change the database')
    .option('--no-wait', 'print the queued operation and return')
    .option('--idempotency-key <key>', 'Idempotency-Key header (default: a fresh one)')
    .option('--api <url>', 'control plane URL')
    .option('--json', 'print the API answer as JSON')
    .action(async (app: string, opts: RunOptions) => {
      if (!opts.yes)
        throw new CliError(
          `running the migrations of ${app} changes its database; run again with --yes to confirm`,
          ExitCode.usage,
        );
      const client: ApiClientOptions = opts.api ? { api: opts.api } : {};
      const queued = await apiPost<{ operation: OperationView }>(
        `/api/v1/apps/${encodeURIComponent(app)}/migrations`,
        { ref: opts.ref, confirm: true },
        { ...client, idempotencyKey: opts.idempotencyKey ?? `cli-${crypto.randomUUID()}` },
      );
      if (!opts.wait)
        return out(opts.json ? JSON.stringify(queued, null, 2) + '\n' : `queued operation ${queued.operation.id}\n`);
      const done = await waitForOperation(queued.operation.id, client);
      if (opts.json) return out(JSON.stringify(done, null, 2) + '\n');
      const receipt = (done.result ?? {}) as MigrationReceiptView;
      const applied = receipt.applied ?? [];
      const already = receipt.alreadyApplied ?? [];
      out(
        `migrated ${receipt.database ?? app} at ${receipt.ref ?? opts.ref}${receipt.commit ? ` (${receipt.commit.slice(0, 12)})` : ''}; operation ${done.id}\n`,
      );
      out(`applied ${applied.length}: ${applied.join(', ') || '-'}\n`);
      out(`already applied ${already.length}: ${already.join(', ') || '-'}\n`);
      out(`pre-migration snapshot: ${receipt.preMigrationSnapshot ?? 'none'}\n`);
    });
}
