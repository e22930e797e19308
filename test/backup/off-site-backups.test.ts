// tier: full
/**
 * Off-site platform backups through an S3-compatible server on loopback (s3rver): each verified
 * backup is exported, retention applies remotely too, and `svc restore <s3 key>` restores from the bucket.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { loadConfig } from '../../platform/config.js';
import { silentLogger } from '../../platform/logger.js';
import { S3PlatformBackups } from '../../platform/object-storage/s3-platform-backups.js';
import { countDatabaseRows } from '../../store/database-check.js';
import { restorePlatformFromArchive } from '../../wiring/control/platform-backups.js';
import { backupFixture } from './backup-fixture.js';
import { startS3Server } from '../helpers/s3-server.js';

test('Verified backups are exported to the bucket with the same retention, and a restore by S3 key brings them back', async (t) => {
  const s3dir = fs.mkdtempSync('/tmp/svc-s3-');
  t.teardown(() => fs.rmSync(s3dir, { recursive: true, force: true }));
  const { endpoint } = await startS3Server(t, ['offsite'], s3dir);
  const store = new S3PlatformBackups({ endpoint, accessKey: 'S3RVER', secretKey: 'S3RVER' });
  t.teardown(() => store.destroy());
  const fx = await backupFixture(t, undefined, { store, bucket: 'offsite' });
  const taken = [];
  for (let i = 0; i < 3; i += 1) taken.push(await fx.service.take({ noSecrets: true }));
  t.true(taken.every((b) => b.status === 'verified'));
  const remote = await fx.service.listRemote();
  // An export that failed is reported as an event, not thrown: say why when one is missing.
  const exportFailures = fx.events.filter((e) => e.type === 'platform.backup.export_failed').map((e) => e.body);
  t.deepEqual(
    remote.map((r) => path.basename(r.key)),
    [taken[2]!.file, taken[1]!.file],
    `the oldest was removed remotely too (keep 2); export failures: ${JSON.stringify(exportFailures)}`,
  );
  t.is(fx.service.list()[0]!.remoteKey, `platform-backups/${taken[2]!.file}`);

  const target = path.join(fx.root, 'new-host', 'data');
  const config = loadConfig({
    SVC_DATA_DIR: target,
    SVC_APPS_DIR: path.join(target, 'apps'),
    SVC_POSTGRES_MANAGED: 'false',
    SVC_BACKUP_S3_BUCKET: 'offsite',
    SVC_S3_ENDPOINT: endpoint,
    SVC_S3_ACCESS_KEY: 'S3RVER',
    SVC_S3_SECRET_KEY: 'S3RVER',
  });
  const report = await restorePlatformFromArchive(config, silentLogger(), {
    archive: remote[0]!.key,
    key: undefined,
    yes: false,
  });
  t.is(report.backupId, taken[2]!.id);
  t.deepEqual(
    countDatabaseRows(path.join(target, 'knowledge.db')),
    countDatabaseRows(path.join(fx.dataDir, 'knowledge.db')),
  );
  t.deepEqual(fs.readdirSync(path.dirname(target)), ['data'], 'the download is removed');
});
