/**
 * `svc snapshots`: an app's database snapshots over the versioned API (`/api/v1/apps/{id}/snapshots`).
 * `list`, `take`, `restore`, `retention`, `export`, `remote`, `import`. Mutations send a fresh
 * Idempotency-Key; `take`, `restore` and `retention --execute` queue durable operations and wait
 * for their receipt.
 * A client command: it imports nothing of the server.
 */
import crypto from 'node:crypto';
import type { Command } from 'commander';
import { apiGet, apiPost, type ApiClientOptions } from '../api-client.js';
import { CliError, ExitCode } from '../cli-error.js';
import { renderTable } from '../table.js';
import { waitForOperation, type OperationView } from '../operation-wait.js';

interface SnapshotView {
  filename: string;
  database: string;
  kind: string;
  commit: string | null;
  timestamp?: string;
  createdAt: string;
  sizeBytes: number;
}

interface InventoryView {
  app: string;
  database: string;
  keep: number;
  snapshots: SnapshotView[];
}

interface RetentionPreviewView {
  app: string;
  database: string;
  keep: number;
  entries: { filename: string; action: string }[];
}

interface RetentionReceiptView {
  app: string;
  database: string;
  keep: number;
  deleted: string[];
  kept: string[];
}

interface RemoteView {
  key: string;
  filename: string;
  sizeBytes: number;
  lastModified: string | null;
}

interface CommonOptions extends ApiClientOptions {
  json?: boolean;
}

function out(text: string): void {
  process.stdout.write(text);
}

function printJson(value: unknown): void {
  out(JSON.stringify(value, null, 2) + '\n');
}

function snapshotsPath(app: string, rest = ''): string {
  return `/api/v1/apps/${encodeURIComponent(app)}/snapshots${rest}`;
}

function mutation(opts: ApiClientOptions) {
  return { ...opts, idempotencyKey: `cli-${crypto.randomUUID()}` };
}

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** `--keep N`: a whole number from 0 to 9999. */
function parseKeep(raw: string): number {
  if (!/^\d{1,4}$/.test(raw))
    throw new CliError(`--keep must be a whole number from 0 to 9999, not "${raw}"`, ExitCode.usage);
  return Number(raw);
}

function withCommon(command: Command): Command {
  return command.option('--api <url>', 'control plane URL').option('--json', 'print the API answer as JSON');
}

/** Registers `snapshots` and its subcommands. */
export function registerSnapshots(program: Command): void {
  const snapshots = program
    .command('snapshots')
    .description("An app's PostgreSQL snapshots: list, take, restore, retention, export, remote, import");

  withCommon(snapshots.command('list <app>').description('Local snapshots of the app, newest first')).action(
    async (app: string, opts: CommonOptions) => {
      const inventory = await apiGet<InventoryView>(snapshotsPath(app), opts);
      if (opts.json) return printJson(inventory);
      out(`${inventory.app}: database ${inventory.database}, keep ${inventory.keep}\n`);
      out(
        renderTable(
          ['FILENAME', 'KIND', 'COMMIT', 'CREATED', 'SIZE'],
          inventory.snapshots.map((s) => [s.filename, s.kind, s.commit ?? '-', s.createdAt, size(s.sizeBytes)]),
        ),
      );
    },
  );

  withCommon(
    snapshots
      .command('take <app>')
      .description('Dump the database now (a durable app.snapshot operation) and wait for it')
      .option('--no-wait', 'print the queued operation and return'),
  ).action(async (app: string, opts: CommonOptions & { wait: boolean }) => {
    const queued = await apiPost<{ operation: OperationView }>(snapshotsPath(app), {}, mutation(opts));
    if (!opts.wait) return opts.json ? printJson(queued) : out(`queued operation ${queued.operation.id}\n`);
    const done = await waitForOperation(queued.operation.id, opts);
    if (opts.json) return printJson(done);
    const file = (done.result as { snapshot?: string } | null | undefined)?.snapshot;
    out(`snapshot taken${file ? `: ${file}` : ''} (operation ${done.id})\n`);
  });

  withCommon(
    snapshots
      .command('restore <app> <file>')
      .description('Replace the database with a snapshot (an app.snapshot-restore operation); needs --yes')
      .option('--yes', 'confirm: the restore replaces the database contents')
      .option('--pre-restore', 'take a safety snapshot first (default: snapshots.preRestore)')
      .option('--no-pre-restore', 'take no safety snapshot, whatever snapshots.preRestore says'),
  ).action(async (app: string, file: string, opts: CommonOptions & { yes?: boolean; preRestore?: boolean }) => {
    if (!opts.yes)
      throw new CliError(
        `restoring ${file} replaces the database of ${app}; run again with --yes to confirm`,
        ExitCode.usage,
      );
    const body = { confirm: true, ...(opts.preRestore === undefined ? {} : { preRestore: opts.preRestore }) };
    const queued = await apiPost<{ operation: OperationView }>(
      snapshotsPath(app, `/${encodeURIComponent(file)}/restore`),
      body,
      mutation(opts),
    );
    const done = await waitForOperation(queued.operation.id, opts);
    if (opts.json) return printJson(done);
    const receipt = (done.result ?? {}) as {
      restoredSnapshot?: string;
      safetySnapshot?: string | null;
      database?: string;
    };
    out(`restored ${receipt.database ?? 'the database'} from ${receipt.restoredSnapshot ?? file}\n`);
    out(`safety snapshot: ${receipt.safetySnapshot ?? 'none'}\n`);
  });

  withCommon(
    snapshots
      .command('retention <app>')
      .description(
        'Preview which snapshots retention keeps and prunes; --execute --yes deletes the older ones (an app.snapshot-prune operation) and waits for it',
      )
      .option('--keep <n>', 'how many to keep (default snapshots.keep, then 3)', parseKeep)
      .option('--execute', 'delete the snapshots the preview marks would-prune (needs --yes)')
      .option('--yes', 'confirm --execute')
      .option('--no-wait', 'with --execute: print the queued operation and return'),
  ).action(
    async (app: string, opts: CommonOptions & { keep?: number; execute?: boolean; yes?: boolean; wait: boolean }) => {
      if (!opts.execute) {
        if (opts.yes)
          throw new CliError('--yes confirms --execute; without --execute retention only previews', ExitCode.usage);
        const query = opts.keep === undefined ? '' : `?keep=${opts.keep}`;
        const preview = await apiGet<RetentionPreviewView>(snapshotsPath(app, `/retention${query}`), opts);
        if (opts.json) return printJson(preview);
        out(`${preview.app}: database ${preview.database}, keep ${preview.keep} (preview; --execute --yes applies)\n`);
        out(
          renderTable(
            ['FILENAME', 'ACTION'],
            preview.entries.map((e) => [e.filename, e.action]),
          ),
        );
        return;
      }
      if (!opts.yes)
        throw new CliError('retention --execute deletes snapshot files; add --yes to confirm', ExitCode.usage);
      const queued = await apiPost<{ operation: OperationView }>(
        snapshotsPath(app, '/retention'),
        { confirm: true, ...(opts.keep === undefined ? {} : { keep: opts.keep }) },
        mutation(opts),
      );
      if (!opts.wait) return opts.json ? printJson(queued) : out(`queued operation ${queued.operation.id}\n`);
      const done = await waitForOperation(queued.operation.id, opts);
      if (opts.json) return printJson(done);
      const receipt = (done.result ?? {}) as Partial<RetentionReceiptView>;
      const deleted = receipt.deleted ?? [];
      const kept = receipt.kept ?? [];
      out(
        `applied retention to ${receipt.app ?? app} (database ${receipt.database ?? '-'}, keep ${receipt.keep ?? '-'}; operation ${done.id})\n`,
      );
      out(`deleted ${deleted.length}: ${deleted.join(', ') || '-'}\n`);
      out(`kept ${kept.length}: ${kept.join(', ') || '-'}\n`);
    },
  );

  withCommon(
    snapshots.command('export <app>').description('Upload the latest local snapshot to snapshots.exportBucket'),
  ).action(async (app: string, opts: CommonOptions) => {
    const remote = await apiPost<RemoteView>(snapshotsPath(app, '/export'), {}, mutation(opts));
    if (opts.json) return printJson(remote);
    out(`exported ${remote.filename} as ${remote.key} (${size(remote.sizeBytes)})\n`);
  });

  withCommon(
    snapshots.command('remote <app>').description("The app's snapshots in snapshots.exportBucket, newest first"),
  ).action(async (app: string, opts: CommonOptions) => {
    const listing = await apiGet<{ app: string; objects: RemoteView[] }>(snapshotsPath(app, '/remote'), opts);
    if (opts.json) return printJson(listing);
    out(
      renderTable(
        ['KEY', 'SIZE', 'MODIFIED'],
        listing.objects.map((o) => [o.key, size(o.sizeBytes), o.lastModified ?? '-']),
      ),
    );
  });

  withCommon(
    snapshots
      .command('import <app> <key>')
      .description('Download a remote snapshot (a key under snapshots/<app>/) into the local folder'),
  ).action(async (app: string, key: string, opts: CommonOptions) => {
    const entry = await apiPost<SnapshotView>(snapshotsPath(app, '/import'), { key }, mutation(opts));
    if (opts.json) return printJson(entry);
    out(`imported ${entry.filename} (${size(entry.sizeBytes)})\n`);
  });
}
