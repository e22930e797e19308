// tier: full
/**
 * `svc migrations run` against a real control plane and a real PostgreSQL cluster: the confirmation,
 * the receipt, a second run that applies nothing, a failed migration, the Idempotency-Key and the
 * exit codes (ADR 0015).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { runSvc, type CliResult } from '../helpers/cli.js';
import { startPostgres, type PostgresCluster } from '../helpers/postgres.js';
import { request, startTestControlPlane } from '../helpers/servers.js';
import { testConfig } from '../helpers/test-config.js';
import { waitForReconciled } from '../helpers/wait-for.js';

let cluster: PostgresCluster;
test.before(async () => {
  cluster = await startPostgres();
});
test.after.always(() => cluster?.stop());

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.test', ...args], { cwd, stdio: 'ignore' });

function writeApp(appsDir: string, name: string, spec: string, migrations: Record<string, string> = {}): void {
  const dir = path.join(appsDir, name);
  fs.mkdirSync(path.join(dir, 'migrations'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'infraspec.yaml'), spec);
  for (const [file, sql] of Object.entries(migrations)) fs.writeFileSync(path.join(dir, 'migrations', file), sql);
}

test('svc migrations run applies the declared migrations once with --yes and exits as other commands do', async (t) => {
  cluster.psql('CREATE DATABASE books');
  cluster.psql('CREATE TABLE entries (amount integer)', 'books');
  cluster.psql('CREATE DATABASE broken');
  const config = testConfig(t, {
    SVC_POSTGRES_HOST: cluster.host,
    SVC_POSTGRES_PORT: String(cluster.port),
    SVC_POSTGRES_USER: cluster.user,
    SVC_POSTGRES_BIN_DIR: cluster.binDir,
  });
  const snapshotsDir = path.join(path.dirname(config.dataDir), 'snapshots');
  const withDb = (name: string, database: string) =>
    `name: ${name}\ninfrastructure:\n  postgres:\n    database: ${database}\nmigrations: migrations\nprocesses:\n  web:\n    port: 8080\n`;
  writeApp(config.appsDir, 'books', withDb('books', 'books'), {
    '001_note.sql': 'ALTER TABLE entries ADD COLUMN note text;',
  });
  writeApp(config.appsDir, 'broken', withDb('broken', 'broken'), { '001_bad.sql': 'ALTER TABLE missing ADD x int;' });
  writeApp(config.appsDir, 'plain', 'name: plain\nprocesses:\n  web:\n    port: 8080\n');
  git(config.appsDir, 'init', '-q', '-b', 'main');
  git(config.appsDir, 'add', '-A');
  git(config.appsDir, 'commit', '-q', '-m', 'apps');
  const plane = await startTestControlPlane(t, { ...config, snapshotsDir });
  await waitForReconciled(
    [plane.reconcilers.specController],
    async () =>
      (await request(`${plane.url}/api/apps/books`)).status === 200 &&
      (await request(`${plane.url}/api/apps/broken`)).status === 200,
    { what: 'books and broken discovered' },
  );
  const svc = (...args: string[]): Promise<CliResult> =>
    runSvc(['migrations', ...args], { env: { SVC_API_URL: plane.url }, timeoutMs: 120_000 });
  const noteColumns = () =>
    cluster
      .psql(
        "SELECT count(*) FROM information_schema.columns WHERE table_name = 'entries' AND column_name = 'note'",
        'books',
      )
      .trim();

  const [help, unconfirmed, badRef] = await Promise.all([
    svc('run', '--help'),
    svc('run', 'books'),
    svc('run', 'books', '--ref', 'main:x', '--yes'),
  ]);
  t.is(help.code, 0, help.stderr);
  t.regex(help.stdout, /--yes/);
  t.regex(help.stdout, /--ref <ref>/);
  t.is(unconfirmed.code, 2, 'without --yes: a usage error');
  t.regex(unconfirmed.stderr, /^error: .*--yes/);
  t.is(badRef.code, 2);
  t.regex(badRef.stderr, /--ref must be/);
  t.is(noteColumns(), '0', 'nothing ran without --yes');

  const [noApp, noMigrations] = await Promise.all([svc('run', 'nope', '--yes'), svc('run', 'plain', '--yes')]);
  t.is(noApp.code, 4, noApp.stderr);
  t.is(noMigrations.code, 1, noMigrations.stderr);

  const first = await svc('run', 'books', '--ref', 'main', '--yes');
  t.is(first.code, 0, first.stderr);
  t.regex(first.stdout, /^migrated books at main \([0-9a-f]{12}\); operation op_\S+$/m);
  t.regex(first.stdout, /^applied 1: 001_note\.sql$/m);
  t.regex(first.stdout, /^pre-migration snapshot: books_premigrate_/m);
  t.is(noteColumns(), '1');

  const [second, failed] = await Promise.all([svc('run', 'books', '--yes'), svc('run', 'broken', '--yes')]);
  t.is(second.code, 0, second.stderr);
  t.regex(second.stdout, /^applied 0: -$/m);
  t.regex(second.stdout, /^already applied 1: 001_note\.sql$/m);
  t.is(failed.code, 1, 'a migration that fails fails the command');
  t.regex(failed.stderr, /^error: operation op_\S+ \(app\.migrate\) failed/);

  const [queued, retried] = [
    await svc('run', 'books', '--yes', '--no-wait', '--json', '--idempotency-key', 'mig-1'),
    await svc('run', 'books', '--yes', '--no-wait', '--json', '--idempotency-key', 'mig-1'),
  ];
  t.is(queued.code, 0, queued.stderr);
  const operation = (JSON.parse(queued.stdout) as { operation: { id: string; kind: string } }).operation;
  t.is(operation.kind, 'app.migrate');
  t.is(
    (JSON.parse(retried.stdout) as { operation: { id: string } }).operation.id,
    operation.id,
    'the same key queues no second run',
  );
  t.is((await plane.deploys.worker.waitFor(operation.id)).status, 'succeeded');
  t.is(cluster.psql('SELECT count(*) FROM svc_schema_migrations', 'books').trim(), '1', 'each file ran once');
});
