// tier: quick
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { ConflictError, NotFoundError, ValidationError } from '../../domain/errors.js';
import { SnapshotFolder } from '../../platform/snapshots/snapshot-folder.js';
import { tempDir } from '../helpers/temp-dir.js';

function stage(folder: SnapshotFolder, content: string): string {
  const temp = folder.incomingPath();
  fs.writeFileSync(temp, content);
  return temp;
}

test('SnapshotFolder publishes owner-only dumps and never overwrites a name', (t) => {
  const folder = new SnapshotFolder(path.join(tempDir(t), 'snapshots'));
  const entry = folder.publish(stage(folder, 'dump-1'), 'ledger_manual_none_20260101T000000.dump');
  t.is(entry.sizeBytes, 6);
  t.is(entry.createdAt, '2026-01-01T00:00:00.000Z');
  t.is(fs.statSync(folder.pathOf(entry.filename)).mode & 0o777, 0o600);
  t.is(fs.statSync(folder.dir).mode & 0o777, 0o700);
  const second = stage(folder, 'dump-2');
  t.throws(() => folder.publish(second, entry.filename), { instanceOf: ConflictError });
  t.is(fs.readFileSync(folder.pathOf(entry.filename), 'utf8'), 'dump-1');
  t.false(fs.existsSync(second), 'the refused temp file is removed');
});

test('SnapshotFolder lists only regular files with valid names, ignoring links and temp files', (t) => {
  const folder = new SnapshotFolder(path.join(tempDir(t), 'snapshots'));
  folder.publish(stage(folder, 'a'), 'ledger_manual_none_20260101T000000.dump');
  folder.publish(stage(folder, 'bb'), 'ledger_predeploy_abcdef1_20260102T000000.dump');
  fs.symlinkSync('/etc/hostname', path.join(folder.dir, 'ledger_manual_none_20260103T000000.dump'));
  fs.mkdirSync(path.join(folder.dir, 'ledger_manual_none_20260104T000000.dump'));
  fs.writeFileSync(path.join(folder.dir, 'notes.txt'), 'x');
  stage(folder, 'half-written');
  t.deepEqual(
    folder.list().map((e) => e.filename),
    ['ledger_predeploy_abcdef1_20260102T000000.dump', 'ledger_manual_none_20260101T000000.dump'],
  );
  t.throws(() => folder.pathOf('ledger_manual_none_20260103T000000.dump'), { instanceOf: NotFoundError });
});

test('SnapshotFolder refuses names that could escape the folder', (t) => {
  const folder = new SnapshotFolder(path.join(tempDir(t), 'snapshots'));
  for (const name of [
    '../ledger_manual_none_20260101T000000.dump',
    '/etc/passwd',
    '..',
    'ledger_manual_none_20260101T000000.dump/../x',
  ]) {
    t.throws(() => folder.pathOf(name), { instanceOf: ValidationError }, name);
  }
});

test('SnapshotFolder never writes through a symbolic link planted under a snapshot name', (t) => {
  const root = tempDir(t);
  const folder = new SnapshotFolder(path.join(root, 'snapshots'));
  folder.publish(stage(folder, 'x'), 'ledger_manual_none_20260101T000000.dump');
  const outside = path.join(root, 'outside.txt');
  fs.writeFileSync(outside, 'precious');
  const planted = 'ledger_manual_none_20260105T000000.dump';
  fs.symlinkSync(outside, path.join(folder.dir, planted));
  t.throws(() => folder.publish(stage(folder, 'attack'), planted), { instanceOf: ConflictError });
  t.is(fs.readFileSync(outside, 'utf8'), 'precious');
  t.throws(() => folder.pathOf(planted), { instanceOf: NotFoundError });
  t.throws(() => folder.remove(planted), { instanceOf: NotFoundError });
  t.true(fs.existsSync(outside));
  t.false(folder.list().some((e) => e.filename === planted));
});
