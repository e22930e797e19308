// tier: full
/**
 * The archive's heavy work in a low-priority child process (docs/adr/0167): packed, encrypted and read
 * back there with every file's SHA-256, written no faster than its pace, and an entry outside the
 * archive folder refused without anything written outside it.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { generateIdentity } from 'age-encryption';
import { parseBackupKey } from '../../platform/backup/backup-key.js';
import { hashFiles, readArchive, writeArchive } from '../../platform/backup/backup-archive.js';
import { tempDir } from '../helpers/temp-dir.js';

test('An archive packed and encrypted by the child keeps to its rate, and reads back whole with each file hashed', async (t) => {
  const root = tempDir(t, 'svc-archive-');
  const folder = path.join(root, 'staged');
  fs.mkdirSync(path.join(folder, 'postgres'), { recursive: true });
  fs.writeFileSync(path.join(folder, 'manifest.json'), '{"format":"test"}');
  fs.writeFileSync(path.join(folder, 'big.db'), Buffer.alloc(3 * 2 ** 20, 5));
  fs.writeFileSync(path.join(folder, 'postgres', 'a.dump'), 'dump');
  const key = await parseBackupKey(await generateIdentity());
  const rate = 2_000_000;
  const started = performance.now();
  const written = await writeArchive(folder, path.join(root, 'out.age'), key, {
    syncEveryBytes: 2 ** 20,
    bytesPerSecond: rate,
  });
  const ms = performance.now() - started;
  t.false(fs.existsSync(path.join(root, 'out.age.partial')));
  t.is(written.bytes, fs.statSync(written.file).size);
  // Never faster than its rate (a lower bound: load only slows it down).
  t.true(ms >= (written.bytes / rate) * 1000 * 0.8, `${written.bytes} bytes in ${ms.toFixed(0)} ms`);
  t.false(fs.readFileSync(written.file).includes(Buffer.from('{"format":"test"}')), 'encrypted');

  const read = await readArchive(written.file, path.join(root, 'check'), key, { write: false });
  t.is(read.sealing, 'age');
  t.is(read.manifest, '{"format":"test"}');
  t.false(read.unpacked);
  t.deepEqual(fs.readdirSync(path.join(root, 'check')), [], 'read whole without writing it out');
  const names = ['big.db', 'manifest.json', 'postgres/a.dump'];
  const sums = await hashFiles(names.map((n) => path.join(folder, n)));
  t.deepEqual(
    names.map((n) => read.entries.find((e) => e.path === n)),
    names.map((n, i) => ({ path: n, bytes: sums[i]!.bytes, sha256: sums[i]!.sha256 })),
  );

  const unpacked = await readArchive(written.file, path.join(root, 'unpacked'), key, { write: true });
  t.true(unpacked.unpacked);
  t.deepEqual(fs.readFileSync(path.join(root, 'unpacked', 'big.db')), fs.readFileSync(path.join(folder, 'big.db')));
});

test('An archive with an entry outside its folder is refused, and nothing is written outside it', async (t) => {
  const root = tempDir(t, 'svc-archive-');
  const inner = path.join(root, 'a', 'b');
  fs.mkdirSync(inner, { recursive: true });
  fs.writeFileSync(path.join(root, 'a', 'escape.txt'), 'outside');
  fs.writeFileSync(path.join(inner, 'manifest.json'), '{}');
  // GNU tar with -P keeps the "../" of the second entry.
  const evil = path.join(root, 'evil.tar');
  execFileSync('tar', ['-cf', evil, '-P', 'manifest.json', '../escape.txt'], { cwd: inner });
  const into = path.join(root, 'x', 'unpack');
  const error = await t.throwsAsync(readArchive(evil, into, undefined, { write: true }));
  t.regex(error.message, /damaged or truncated.*outside the archive folder/);
  t.false(fs.existsSync(path.join(root, 'x', 'escape.txt')));
});
