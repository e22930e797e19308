// tier: full
/**
 * kill -9 in the middle of a backup and of a restore: a backup killed midway never lists as good
 * (the next start marks it interrupted, with a critical event), and a restore killed midway leaves the
 * data folder as it was or complete, so a restore run again succeeds.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { SVC_BIN, SVC_FROM_SOURCE, programArgs } from '../helpers/cli.js';
import { checkDatabase } from '../../store/database-check.js';
import { enqueueOperation } from '../../store/control/operations/operations.js';
import { backupFixture } from './backup-fixture.js';
import { sourceDir } from '../helpers/repo.js';

const here = sourceDir(import.meta.dirname);

/** Resolves once an entry whose name `matches` appears in `dir` (watched, not polled). */
function appears(dir: string, matches: (name: string) => boolean): Promise<string> {
  fs.mkdirSync(dir, { recursive: true });
  return new Promise((resolve) => {
    const watcher = fs.watch(dir, (_event, name) => {
      if (name !== null && matches(name)) {
        watcher.close();
        resolve(name);
      }
    });
  });
}

function killed(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/**
 * Kills a backup once an entry `matches` in the backups folder, then checks it never lists as good,
 * leaves no `.partial`, and that the next backup is good.
 */
async function killedBackup(t: ExecutionContext, matches: (name: string) => boolean): Promise<void> {
  const fx = await backupFixture(t);
  const insert = fx.control.db.transaction(() => {
    for (let i = 0; i < 5000; i += 1) enqueueOperation(fx.control.db, { kind: 'app.deploy', app: `bulk-${i % 50}` });
  });
  insert();
  const reached = appears(fx.backupsDir, matches);
  const child = spawn(
    process.execPath,
    [...programArgs(path.join(here, 'crash-backup.ts')), fx.dataDir, fx.backupsDir, fx.appsDir],
    { stdio: 'ignore' },
  );
  await reached;
  await killed(child);
  t.is(child.signalCode, 'SIGKILL', 'killed before it finished');
  t.deepEqual(
    fx.service.list().map((b) => b.status),
    ['running'],
  );
  await fx.service.recover();
  const [record] = fx.service.list();
  t.is(record!.status, 'interrupted');
  t.regex(record!.error ?? '', /stopped while this backup ran/);
  t.false(fs.existsSync(`${fx.service.archivePath(record!)}.partial`));
  t.false(fs.existsSync(fx.service.archivePath(record!)), 'no archive of the killed backup');
  t.is(fx.events.find((e) => e.type === 'platform.backup.failed')?.severity, 'critical');
  // The next backup is good, and retention drops the interrupted one.
  const next = await fx.service.take({ noSecrets: true });
  t.is(next.status, 'verified', next.error ?? '');
  t.deepEqual(
    fx.service.list().map((b) => b.status),
    ['verified'],
  );
  // Nothing of the killed backup is left beside the good one's archive (its archive child stopped too).
  t.deepEqual(
    fs.readdirSync(fx.backupsDir).filter((n) => n.endsWith('.partial') || n.startsWith('.staging-')),
    [],
  );
}

test('A backup killed with SIGKILL midway never lists as good: the next start marks it interrupted and reports it', async (t) => {
  await killedBackup(t, (name) => name.startsWith('.staging-'));
});

test('A backup killed with SIGKILL while its archive is written leaves no archive and no .partial, and never lists as good', async (t) => {
  await killedBackup(t, (name) => name.endsWith('.partial'));
});

test('A restore killed with SIGKILL midway leaves the data folder absent or whole, and a restore run again succeeds', async (t) => {
  const fx = await backupFixture(t);
  const backup = await fx.service.take({ noSecrets: true });
  t.is(backup.status, 'verified', backup.error ?? '');
  const host = path.join(fx.root, 'new-host');
  const target = path.join(host, 'data');
  const env = {
    ...process.env,
    SVC_FROM_SOURCE,
    SVC_LOG_LEVEL: 'silent',
    SVC_POSTGRES_MANAGED: 'false',
    SVC_DATA_DIR: target,
    SVC_APPS_DIR: path.join(target, 'apps'),
  };
  const reading = appears(host, (name) => name.startsWith('data.restore-archive-'));
  const child = spawn(process.execPath, [SVC_BIN, 'restore', fx.service.archivePath(backup)], { env, stdio: 'ignore' });
  await reading;
  await killed(child);
  // Either the kill came before the folder was renamed into place (nothing there), or after (complete).
  if (fs.existsSync(target)) {
    t.is(checkDatabase(path.join(target, 'control.db')).integrity, 'ok');
    t.is(checkDatabase(path.join(target, 'knowledge.db')).integrity, 'ok');
  } else t.pass('the data folder was not created');
  const again = spawn(process.execPath, [SVC_BIN, 'restore', '--yes', fx.service.archivePath(backup)], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  again.stdout.on('data', (c: Buffer) => (output += c.toString()));
  again.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const code = await new Promise<number | null>((resolve) => again.once('close', resolve));
  t.is(code, 0, output);
  t.regex(output, new RegExp(`restored backup ${backup.id}`));
  t.is(checkDatabase(path.join(target, 'control.db')).integrity, 'ok');
  t.deepEqual(
    fs.readdirSync(host).filter((n) => n.includes('.restor')),
    [],
    'the killed run left nothing behind',
  );
});
