// tier: full
/**
 * `svc snapshots` against a real control plane, a real PostgreSQL cluster and s3rver: every
 * subcommand and its exit codes (ADR 0015).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { runSvc, type CliResult } from '../helpers/cli.js';
import { startPostgres, type PostgresCluster } from '../helpers/postgres.js';
import { request, startTestControlPlane } from '../helpers/servers.js';
import { tempDir } from '../helpers/temp-dir.js';
import { testConfig } from '../helpers/test-config.js';
import { waitForReconciled } from '../helpers/wait-for.js';
import { startS3Server } from '../helpers/s3-server.js';

let cluster: PostgresCluster;
test.before(async () => {
  cluster = await startPostgres();
});
test.after.always(() => cluster?.stop());

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.test', ...args], { cwd, stdio: 'ignore' });

test('svc snapshots lists, takes, restores, applies retention, exports, lists remote and imports', async (t) => {
  const root = tempDir(t);
  const s3Port = (await startS3Server(t, ['backups'], path.join(root, 's3'))).port;
  cluster.psql('CREATE DATABASE shop');
  cluster.psql('CREATE TABLE orders (total integer); INSERT INTO orders VALUES (7)', 'shop');
  const config = testConfig(t, {
    SVC_POSTGRES_HOST: cluster.host,
    SVC_POSTGRES_PORT: String(cluster.port),
    SVC_POSTGRES_USER: cluster.user,
    SVC_POSTGRES_BIN_DIR: cluster.binDir,
    SVC_S3_ENDPOINT: `http://127.0.0.1:${s3Port}`,
    SVC_S3_ACCESS_KEY: 'S3RVER',
    SVC_S3_SECRET_KEY: 'S3RVER',
  });
  const snapshotsDir = path.join(root, 'snapshots');
  const app = path.join(config.appsDir, 'shop');
  fs.mkdirSync(app, { recursive: true });
  fs.writeFileSync(
    path.join(app, 'infraspec.yaml'),
    'name: shop\ninfrastructure:\n  postgres:\n    database: shop\nsnapshots:\n  keep: 2\n  exportBucket: backups\nprocesses:\n  web:\n    port: 8080\n',
  );
  git(config.appsDir, 'init', '-q', '-b', 'main');
  git(config.appsDir, 'add', '-A');
  git(config.appsDir, 'commit', '-q', '-m', 'apps');
  const plane = await startTestControlPlane(t, { ...config, snapshotsDir });
  await waitForReconciled(
    [plane.reconcilers.specController],
    async () => (await request(`${plane.url}/api/apps/shop`)).status === 200,
    { what: 'shop discovered' },
  );
  // At most two svc processes at once: the suite runs other files beside this one on two cores.
  let running = 0;
  const waiting: (() => void)[] = [];
  const svc = async (...args: string[]): Promise<CliResult> => {
    if (running >= 2) await new Promise<void>((resolve) => waiting.push(resolve));
    running += 1;
    try {
      return await runSvc(['snapshots', ...args], { env: { SVC_API_URL: plane.url }, timeoutMs: 120_000 });
    } finally {
      running -= 1;
      waiting.shift()?.();
    }
  };

  // Three snapshots a second apart (compact timestamps have one-second resolution): two through
  // the command, the first through the API to spare a process.
  const first = await request(`${plane.url}/api/v1/apps/shop/snapshots`, {
    method: 'POST',
    json: {},
    headers: { 'idempotency-key': 'first' },
  });
  t.is((await plane.deploys.worker.waitFor(first.body.operation.id)).status, 'succeeded');
  const taken: string[] = [fs.readdirSync(snapshotsDir)[0]!];
  for (let i = 0; i < 2; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 1_050 - (Date.now() % 1000)));
    const take = await svc('take', 'shop');
    t.is(take.code, 0, take.stderr);
    const match = /snapshot taken: (shop_manual_\S+\.dump)/.exec(take.stdout);
    t.truthy(match, take.stdout);
    taken.push(match![1]!);
    t.is(fs.readdirSync(snapshotsDir).length, i + 2);
  }

  cluster.psql('UPDATE orders SET total = 0', 'shop');
  const [listed, unconfirmed, executeOnly, badKeep, noApp] = await Promise.all([
    svc('list', 'shop'),
    svc('restore', 'shop', taken[2]!),
    svc('retention', 'shop', '--execute'),
    svc('retention', 'shop', '--keep', 'many'),
    svc('list', 'nope'),
  ]);
  t.is(listed.code, 0, listed.stderr);
  t.regex(listed.stdout, /shop: database shop, keep 2/);
  t.deepEqual(
    [...listed.stdout.matchAll(/shop_manual_\S+\.dump/g)].map((m) => m[0]),
    [...taken].reverse(),
    'newest first',
  );
  t.is(unconfirmed.code, 2, 'a restore without --yes is a usage error');
  t.regex(unconfirmed.stderr, /^error: .*--yes/);
  t.is(executeOnly.code, 2, '--execute needs --yes');
  t.is(badKeep.code, 2);
  t.regex(badKeep.stderr, /--keep must be a whole number/);
  t.is(noApp.code, 4);
  t.is(cluster.psql('SELECT total FROM orders', 'shop').trim(), '0', 'nothing was restored');
  t.is(fs.readdirSync(snapshotsDir).length, 3, 'nothing was pruned');

  const restore = await svc('restore', 'shop', taken[2]!, '--yes', '--pre-restore');
  t.is(restore.code, 0, restore.stderr);
  t.regex(restore.stdout, new RegExp(`restored shop from ${taken[2]}`));
  t.regex(restore.stdout, /safety snapshot: shop_prerestore_/);
  t.is(cluster.psql('SELECT total FROM orders', 'shop').trim(), '7');

  // Four local dumps now (three manual, one prerestore); keep 2 from the spec.
  const [missing, preview, previewKeep] = await Promise.all([
    svc('restore', 'shop', 'shop_manual_none_20000101T000000.dump', '--yes'),
    svc('retention', 'shop'),
    svc('retention', 'shop', '--keep', '3', '--json'),
  ]);
  t.is(missing.code, 1, missing.stdout);
  t.regex(missing.stderr, /^error: snapshot shop_manual_none_20000101T000000.dump is not in the inventory/);
  t.is(preview.code, 0, preview.stderr);
  t.regex(preview.stdout, /keep 2 \(preview/);
  t.is((preview.stdout.match(/would-prune/g) ?? []).length, 2);
  t.deepEqual(
    (JSON.parse(previewKeep.stdout) as { entries: { action: string }[] }).entries.map((e) => e.action),
    ['keep', 'keep', 'keep', 'would-prune'],
  );
  t.is(fs.readdirSync(snapshotsDir).length, 4, 'a preview deletes nothing');
  const applied = await svc('retention', 'shop', '--keep', '3', '--execute', '--yes');
  t.is(applied.code, 0, applied.stderr);
  t.regex(applied.stdout, /applied retention to shop \(database shop, keep 3; operation op_\S+\)/);
  t.regex(applied.stdout, new RegExp(`deleted 1: ${taken[0]}`));
  t.is(fs.readdirSync(snapshotsDir).length, 3);

  const exported = await svc('export', 'shop');
  t.is(exported.code, 0, exported.stderr);
  const key = /as (snapshots\/shop\/\S+\.dump)/.exec(exported.stdout)?.[1];
  t.truthy(key, exported.stdout);
  const exportedFile = path.basename(key!);
  fs.rmSync(path.join(snapshotsDir, exportedFile));
  const [remote, imported] = await Promise.all([svc('remote', 'shop'), svc('import', 'shop', key!)]);
  t.is(remote.code, 0, remote.stderr);
  t.true(remote.stdout.includes(key!));
  t.is(imported.code, 0, imported.stderr);
  t.true(fs.existsSync(path.join(snapshotsDir, exportedFile)), 'the import brought the dump back');
  const [again, outside] = await Promise.all([
    svc('import', 'shop', key!),
    svc('import', 'shop', 'snapshots/other/shop_manual_none_20000101T000000.dump'),
  ]);
  t.is(again.code, 1, 'an import never overwrites a local dump');
  t.regex(again.stderr, /never overwrite/);
  t.is(outside.code, 1);
  t.regex(outside.stderr, /outside snapshots\/shop\//);
});
