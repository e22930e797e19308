// tier: full
/**
 * A restore onto a data folder that other system users cannot enter (a private parent, as /root is):
 * the PostgreSQL cluster and app folders go to a new hosted folder outside it (ADR 0157, 0162), never
 * into one a platform left, and an interrupted restore's hosted folder does not outlive it.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { generateIdentity } from 'age-encryption';
import { restorePlatform } from '../../controllers/backup/restore-platform.js';
import { hostedLeftoversCheck } from '../../controllers/doctor/hosted-leftovers-check.js';
import {
  HOSTED_OWNER,
  orphanedHostedFolders,
  readHostedFolder,
  resolveHostedFolder,
} from '../../platform/files/hosted-folder.js';
import { backupFixture, type BackupFixture } from './backup-fixture.js';

function restoreTo(fx: BackupFixture, archive: string, target: string, yes: boolean) {
  return restorePlatform({
    archive,
    key: fx.key,
    dataDir: target,
    appsDir: path.join(target, 'apps'),
    yes,
    platformRunning: () => false,
  });
}

/** A private folder (0700, as /root on Debian) below the fixture's root. */
function privateParent(fx: BackupFixture): string {
  const parent = path.join(fx.root, 'private-host');
  fs.mkdirSync(parent, { mode: 0o700 });
  fs.chmodSync(parent, 0o700);
  return parent;
}

test('A restore over a platform with a hosted folder builds a new one; the old one stays with the pre-restore copy and nothing of it mixes in', async (t) => {
  const fx = await backupFixture(t, await generateIdentity());
  // The platform's keys (the age identity of committed secrets) are part of a backup with secrets.
  fs.mkdirSync(path.join(fx.dataDir, 'keys'), { mode: 0o700 });
  fs.writeFileSync(path.join(fx.dataDir, 'keys', 'age-identity.txt'), 'AGE-SECRET-KEY-1HOSTIDENTITY\n', {
    mode: 0o600,
  });
  const backup = await fx.service.take();
  t.is(backup.status, 'verified', backup.error ?? '');
  const target = path.join(privateParent(fx), 'data');
  // The platform being replaced: its data folder names a hosted folder holding an app's secret.
  const old = resolveHostedFolder(target);
  t.teardown(() => fs.rmSync(old.path, { recursive: true, force: true }));
  t.true(old.separate, old.reason);
  fs.writeFileSync(path.join(target, 'control.db'), 'the old platform');
  fs.mkdirSync(path.join(old.path, 'secrets', 'hello'), { recursive: true });
  fs.writeFileSync(path.join(old.path, 'secrets', 'hello', 'TOKEN'), 'old');

  const report = await restoreTo(fx, fx.service.archivePath(backup), target, true);
  t.teardown(() => {
    if (report.hostedDir) fs.rmSync(report.hostedDir, { recursive: true, force: true });
  });
  t.truthy(report.hostedDir, 'other users cannot enter the data folder: a hosted folder is named');
  t.not(report.hostedDir, old.path);
  t.is(readHostedFolder(target), report.hostedDir!);
  t.false(report.hostedDir!.startsWith(target));
  t.is(fs.realpathSync(path.join(target, 'secrets')), path.join(report.hostedDir!, 'secrets'));
  t.false(fs.existsSync(path.join(target, 'secrets', 'hello')), 'the old platform secrets are not in the new folder');
  // The keys came back, into the new hosted folder, owner-only.
  t.deepEqual(report.keys, ['age-identity.txt']);
  const identity = path.join(target, 'keys', 'age-identity.txt');
  t.is(fs.realpathSync(identity), path.join(report.hostedDir!, 'keys', 'age-identity.txt'));
  t.is(fs.readFileSync(identity, 'utf8'), 'AGE-SECRET-KEY-1HOSTIDENTITY\n');
  t.is(fs.statSync(identity).mode & 0o777, 0o600);
  // The replaced platform is whole: its folder still names its own hosted folder, which is untouched.
  t.is(fs.readFileSync(path.join(report.preRestore!, 'control.db'), 'utf8'), 'the old platform');
  t.is(readHostedFolder(report.preRestore!), old.path);
  t.is(fs.readFileSync(path.join(report.preRestore!, 'secrets', 'hello', 'TOKEN'), 'utf8'), 'old');
  t.is(fs.statSync(path.dirname(target)).mode & 0o777, 0o700, 'the private parent stays private');
  // Each hosted folder names its data folder after the renames, so neither counts as left behind.
  const owner = (hosted: string) => fs.readFileSync(path.join(hosted, HOSTED_OWNER), 'utf8').trim();
  t.is(owner(report.hostedDir!), target);
  t.is(owner(old.path), report.preRestore!);
  const orphans = orphanedHostedFolders(path.dirname(old.path));
  t.false(orphans.includes(old.path));
  t.false(orphans.includes(report.hostedDir!));
});

test('A hosted folder whose data folder was deleted is listed as left behind; one in use, or moved with its data folder, is not', (t) => {
  const root = fs.mkdtempSync(path.join('/tmp', 'svc-hosted-root-'));
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  const parent = path.join(root, 'private');
  fs.mkdirSync(parent, { mode: 0o700 });
  const options = { root: path.join(root, 'hosted'), blockedFolder: () => parent };
  const kept = resolveHostedFolder(path.join(parent, 'kept'), options);
  const gone = resolveHostedFolder(path.join(parent, 'gone'), options);
  const moved = resolveHostedFolder(path.join(parent, 'moved'), options);
  t.deepEqual(orphanedHostedFolders(options.root), []);
  fs.rmSync(path.join(parent, 'gone'), { recursive: true });
  fs.renameSync(path.join(parent, 'moved'), path.join(parent, 'moved-again'));
  t.deepEqual(orphanedHostedFolders(options.root), [gone.path, moved.path].sort());
  // The moved data folder claims its folder again at its next start.
  t.is(resolveHostedFolder(path.join(parent, 'moved-again'), options).path, moved.path);
  t.deepEqual(orphanedHostedFolders(options.root), [gone.path]);
  t.true(fs.existsSync(kept.path));
  // svc doctor names it, with a fix.
  const check = hostedLeftoversCheck(options.root);
  t.like(check, { id: 'data.hosted_leftovers', status: 'warn' });
  t.true(check.detail.includes(gone.path), check.detail);
  fs.rmSync(gone.path, { recursive: true });
  t.like(hostedLeftoversCheck(options.root), { status: 'pass' });
});

test('A restore removes an interrupted restore folder together with the hosted folder it had made', async (t) => {
  const fx = await backupFixture(t, await generateIdentity());
  const backup = await fx.service.take();
  const target = path.join(privateParent(fx), 'data');
  // What a restore killed after it made its hosted folder leaves beside the target.
  const unfinished = `${target}.restoring-dead01`;
  const leftover = resolveHostedFolder(unfinished, { name: 'data' });
  t.teardown(() => fs.rmSync(leftover.path, { recursive: true, force: true }));
  t.true(leftover.separate);

  const report = await restoreTo(fx, fx.service.archivePath(backup), target, false);
  t.teardown(() => {
    if (report.hostedDir) fs.rmSync(report.hostedDir, { recursive: true, force: true });
  });
  t.false(fs.existsSync(unfinished));
  t.false(fs.existsSync(leftover.path), 'the interrupted restore hosted folder is gone');
  t.truthy(report.hostedDir);
  t.true(fs.existsSync(report.hostedDir!));
  t.is(report.preRestore, null);
  t.deepEqual(fs.readdirSync(path.dirname(target)), ['data']);
});

test('A backup without secrets leaves the platform keys out', async (t) => {
  const fx = await backupFixture(t);
  fs.mkdirSync(path.join(fx.dataDir, 'keys'), { mode: 0o700 });
  fs.writeFileSync(path.join(fx.dataDir, 'keys', 'age-identity.txt'), 'AGE-SECRET-KEY-1HOSTIDENTITY\n', {
    mode: 0o600,
  });
  const backup = await fx.service.take({ noSecrets: true });
  t.is(backup.status, 'verified', backup.error ?? '');
  t.false(fs.readFileSync(fx.service.archivePath(backup)).includes(Buffer.from('AGE-SECRET-KEY-1HOSTIDENTITY')));
  const target = path.join(fx.root, 'host2', 'data');
  const report = await restoreTo(fx, fx.service.archivePath(backup), target, false);
  t.deepEqual(report.keys, []);
  t.false(fs.existsSync(path.join(target, 'keys', 'age-identity.txt')));
});
