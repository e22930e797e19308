// tier: full
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { generateIdentity } from 'age-encryption';
import { restorePlatform } from '../../controllers/backup/restore-platform.js';
import { UnprocessableError, ValidationError, ConflictError } from '../../domain/errors.js';
import { enqueueOperation } from '../../store/control/operations/operations.js';
import { countDatabaseRows } from '../../store/database-check.js';
import { backupFixture } from './backup-fixture.js';

function restoreTo(fx: { root: string; key: unknown }, archive: string, target: string, extra: { yes?: boolean } = {}) {
  return restorePlatform({
    archive,
    key: fx.key as never,
    dataDir: target,
    appsDir: path.join(target, 'apps'),
    yes: extra.yes ?? false,
    platformRunning: () => false,
  });
}

test('A platform backup taken while control.db takes writes is verified, lists with its checks, and holds no secret in the clear', async (t) => {
  const fx = await backupFixture(t, await generateIdentity());
  let writes = 0;
  let writing = true;
  const writer = (async () => {
    while (writing) {
      enqueueOperation(fx.control.db, { kind: 'app.deploy', app: 'busy' });
      writes += 1;
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  const backup = await fx.service.take({ trigger: 'test' });
  writing = false;
  await writer;
  t.is(backup.status, 'verified', backup.error ?? '');
  t.true(writes > 0, 'writes went on during the backup');
  t.true(backup.encrypted && backup.secrets);
  t.true(
    backup.verification.some((c) => /control\.db: integrity_check ok/.test(c)),
    backup.verification.join('\n'),
  );
  t.true(backup.verification.some((c) => /knowledge\.db: integrity_check ok/.test(c)));
  t.true(backup.verification.includes('apps bundle verifies'));
  t.deepEqual(
    fx.service.list().map((b) => [b.id, b.status]),
    [[backup.id, 'verified']],
  );
  const bytes = fs.readFileSync(fx.service.archivePath(backup));
  t.true(bytes.subarray(0, 22).toString() === 'age-encryption.org/v1\n');
  t.false(bytes.includes(Buffer.from('the-secret-api-token')), 'the secret setting is encrypted');
  t.deepEqual(fs.readdirSync(fx.backupsDir), [backup.file], 'nothing but the archive is left (no staging, no partial)');
  t.is(fx.events.find((e) => e.type === 'platform.backup.verified')?.severity, 'info');
});

test('Without a key a backup is refused unless secrets are left out, and then no secret setting is in the archive', async (t) => {
  const fx = await backupFixture(t);
  await t.throwsAsync(() => fx.service.take(), { instanceOf: ValidationError, message: /SVC_BACKUP_KEY/ });
  const backup = await fx.service.take({ noSecrets: true });
  t.is(backup.status, 'verified', backup.error ?? '');
  t.false(backup.secrets || backup.encrypted);
  const bytes = fs.readFileSync(fx.service.archivePath(backup));
  t.false(bytes.includes(Buffer.from('the-secret-api-token')));
  t.true(bytes.includes(Buffer.from('"SVC_PORT": "8800"')));
});

test('A restore onto an empty folder brings back every database with the same rows and the apps repository', async (t) => {
  const fx = await backupFixture(t, 'a passphrase long enough');
  const backup = await fx.service.take();
  t.is(backup.status, 'verified', backup.error ?? '');
  const target = path.join(fx.root, 'new-host', 'data');
  const report = await restoreTo(fx, fx.service.archivePath(backup), target);
  t.deepEqual([...report.databases].sort(), ['control.db', 'knowledge.db']);
  t.is(report.preRestore, null);
  // The copy's rows are the source's at the copy's point in time, less the backup's own running record.
  const { platform_backups: restoredBackups, ...restored } = countDatabaseRows(path.join(target, 'control.db'));
  const { platform_backups: sourceBackups, ...source } = countDatabaseRows(path.join(fx.dataDir, 'control.db'));
  t.deepEqual(restored, source);
  t.is(restoredBackups, 0);
  t.is(sourceBackups, 1);
  t.deepEqual(
    countDatabaseRows(path.join(target, 'knowledge.db')),
    countDatabaseRows(path.join(fx.dataDir, 'knowledge.db')),
  );
  t.is(fs.readFileSync(path.join(target, 'apps', 'hello', 'infraspec.yaml'), 'utf8'), 'name: hello\n');
  t.regex(fs.readFileSync(report.settingsFile!, 'utf8'), /SVC_API_TOKEN="the-secret-api-token"/);
  t.is(fs.statSync(report.settingsFile!).mode & 0o777, 0o600);
  t.deepEqual(fs.readdirSync(path.dirname(target)), ['data'], 'no scratch folder is left beside the data folder');
});

test('A restore over a folder holding a platform refuses without --yes, and with it keeps the old folder whole', async (t) => {
  const fx = await backupFixture(t, await generateIdentity());
  const backup = await fx.service.take();
  const target = path.join(fx.root, 'host2', 'data');
  fs.mkdirSync(target, { recursive: true });
  fs.writeFileSync(path.join(target, 'control.db'), 'the old platform');
  await t.throwsAsync(() => restoreTo(fx, fx.service.archivePath(backup), target), {
    instanceOf: ConflictError,
    message: /--yes/,
  });
  t.is(fs.readFileSync(path.join(target, 'control.db'), 'utf8'), 'the old platform', 'nothing changed');
  const report = await restoreTo(fx, fx.service.archivePath(backup), target, { yes: true });
  t.truthy(report.preRestore);
  t.is(fs.readFileSync(path.join(report.preRestore!, 'control.db'), 'utf8'), 'the old platform');
  t.is(
    new Database(path.join(target, 'control.db'), { readonly: true }).pragma('integrity_check', { simple: true }),
    'ok',
  );
  const running = restorePlatform({
    archive: fx.service.archivePath(backup),
    key: fx.key,
    dataDir: target,
    appsDir: path.join(target, 'apps'),
    yes: true,
    platformRunning: () => true,
  });
  await t.throwsAsync(running, { instanceOf: ConflictError, message: /stop it/ });
});

test('Corrupt, truncated, foreign, wrongly keyed and newer archives are refused with a clear error and change nothing', async (t) => {
  const fx = await backupFixture(t, await generateIdentity());
  const backup = await fx.service.take();
  const good = fs.readFileSync(fx.service.archivePath(backup));
  const target = path.join(fx.root, 'host3', 'data');
  const write = (name: string, bytes: Buffer) => {
    const file = path.join(fx.root, name);
    fs.writeFileSync(file, bytes);
    return file;
  };
  const corrupt = Buffer.from(good);
  const middle = Math.floor(corrupt.length / 2);
  corrupt.writeUInt8(corrupt.readUInt8(middle) ^ 0xff, middle);
  const cases: [string, string, RegExp][] = [
    ['corrupt', write('corrupt.age', corrupt), /damaged or truncated|cannot be decrypted/],
    ['truncated', write('truncated.age', good.subarray(0, good.length - 1000)), /damaged or truncated/],
    ['foreign', write('foreign.tar', Buffer.from('PK\x03\x04 not ours at all')), /not an svc platform backup/],
  ];
  for (const [what, file, message] of cases) {
    const error = await t.throwsAsync(() => restoreTo(fx, file, target), { instanceOf: UnprocessableError }, what);
    t.regex(error.message, message, what);
    t.false(fs.existsSync(target), `${what}: nothing was written`);
  }
  await t.throwsAsync(
    () =>
      restorePlatform({
        archive: fx.service.archivePath(backup),
        key: { kind: 'passphrase', passphrase: 'not the right key at all' },
        dataDir: target,
        appsDir: path.join(target, 'apps'),
        yes: false,
        platformRunning: () => false,
      }),
    { instanceOf: UnprocessableError, message: /cannot be decrypted/ },
  );
  t.deepEqual(
    fs.readdirSync(path.dirname(target)).filter((n) => n.startsWith('host3')),
    [],
  );
});

test('An archive from a newer release (newer format or schema) is refused before anything is written', async (t) => {
  const fx = await backupFixture(t);
  fx.control.db.exec(
    "INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (9999, 'from-the-future', 'x', '2030-01-01T00:00:00Z')",
  );
  const backup = await fx.service.take({ noSecrets: true });
  t.is(backup.status, 'failed', 'this release cannot verify what it cannot restore');
  t.regex(backup.error ?? '', /migration 9999/);
  t.is(fx.events.find((e) => e.type === 'platform.backup.failed')?.severity, 'critical');
  const target = path.join(fx.root, 'host4', 'data');
  await t.throwsAsync(() => restoreTo(fx, fx.service.archivePath(backup), target), {
    instanceOf: UnprocessableError,
    message: /schema migration 9999.*restore it with the release that wrote it/,
  });
  t.false(fs.existsSync(target));
});

test('Retention keeps the newest verified backups and removes older archives', async (t) => {
  const fx = await backupFixture(t);
  const taken = [];
  for (let i = 0; i < 3; i += 1) taken.push(await fx.service.take({ noSecrets: true }));
  t.deepEqual(
    fx.service.list().map((b) => b.id),
    [taken[2]!.id, taken[1]!.id],
  );
  t.false(fs.existsSync(fx.service.archivePath(taken[0]!)));
  t.true(fs.existsSync(fx.service.archivePath(taken[2]!)));
});

test('A database no worker can copy is copied on the API thread, and the backup record says why', async (t) => {
  const fx = await backupFixture(t, await generateIdentity());
  // In a rollback-journal mode a second connection's read would make this thread's writers wait.
  fx.control.db.pragma('journal_mode = DELETE');
  const backup = await fx.service.take();
  t.is(backup.status, 'verified', backup.error ?? '');
  t.true(
    backup.verification.some((c) => /^control\.db: copied on the API's thread \(.*delete journal mode/.test(c)),
    backup.verification.join('\n'),
  );
  t.false(
    backup.verification.some((c) => /^knowledge\.db: copied on/.test(c)),
    'knowledge.db went to a worker',
  );
});
