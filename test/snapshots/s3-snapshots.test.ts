// tier: full
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { ValidationError } from '../../domain/errors.js';
import { S3Snapshots } from '../../platform/object-storage/s3-snapshots.js';
import { SnapshotFolder } from '../../platform/snapshots/snapshot-folder.js';
import { tempDir } from '../helpers/temp-dir.js';
import { startS3Server } from '../helpers/s3-server.js';

test('S3Snapshots exports, lists and imports dumps through an S3-compatible server on loopback', async (t) => {
  const root = tempDir(t);
  const s3 = await startS3Server(t, ['backups'], path.join(root, 's3'));
  const remote = new S3Snapshots({ endpoint: s3.endpoint, accessKey: 'S3RVER', secretKey: 'S3RVER' });
  t.teardown(() => remote.destroy());
  const source = new SnapshotFolder(path.join(root, 'a'));
  const temp = source.incomingPath();
  const bytes = Buffer.concat([Buffer.from('PGDMP'), crypto.randomBytes(256 * 1024)]);
  fs.writeFileSync(temp, bytes);
  const dump = source.publish(temp, 'ledger_manual_none_20260101T000000.dump');

  const uploaded = await remote.upload('backups', 'ledger-api', source, dump.filename);
  t.is(uploaded.key, 'snapshots/ledger-api/ledger_manual_none_20260101T000000.dump');
  t.deepEqual(
    (await remote.list('backups', 'ledger-api')).map((r) => [r.filename, r.sizeBytes]),
    [[dump.filename, bytes.length]],
  );
  t.deepEqual(await remote.list('backups', 'other-app'), []);

  const target = new SnapshotFolder(path.join(root, 'b'));
  const imported = await remote.download('backups', 'ledger-api', uploaded.key, target);
  t.true(
    fs.readFileSync(target.pathOf(imported.filename)).equals(bytes),
    'export then import round-trips byte-identical',
  );
  t.is(fs.statSync(target.pathOf(imported.filename)).mode & 0o777, 0o600);
  await t.throwsAsync(() => remote.download('backups', 'ledger-api', uploaded.key, target), {
    instanceOf: ValidationError,
    message: /never overwrite/,
  });
  await t.throwsAsync(
    () =>
      remote.download('backups', 'ledger-api', 'snapshots/other-app/ledger_manual_none_20260101T000000.dump', target),
    { instanceOf: ValidationError, message: /outside snapshots\/ledger-api\// },
  );
  await t.throwsAsync(() => remote.download('backups', 'ledger-api', 'snapshots/ledger-api/../../etc/passwd', target), {
    instanceOf: ValidationError,
  });
});
