// tier: quick
/**
 * The online copy of a SQLite database (ADR 0161): a worker thread copies the file while this thread
 * goes on writing to it, so the event loop is never blocked for the copy's duration; the copy is
 * complete, sound and of one point in time.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import test from 'ava';
import Database from 'better-sqlite3';
import { backupDatabase } from '../../store/database-backup.js';
import { checkDatabaseOffLoop } from '../../store/database-check.js';
import { openDatabase } from '../../store/database.js';
import { tempDir } from '../helpers/temp-dir.js';

/** About 40 MiB of pages: a copy long enough that blocking the loop for it would show. */
const PAYLOAD_ROWS = 640;

test('a copy of a database of tens of MB runs off the event loop while this thread writes, and is one point in time', async (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'live.db');
  const db = openDatabase(file, { synchronous: 'NORMAL' });
  t.teardown(() => db.close());
  db.exec(`
    CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY);
    INSERT INTO schema_migrations VALUES (6), (7);
    CREATE TABLE payload (id INTEGER PRIMARY KEY, body BLOB NOT NULL);
    CREATE TABLE ticks (id INTEGER PRIMARY KEY, at REAL NOT NULL);`);
  const blob = Buffer.alloc(64 * 1024, 7);
  const fill = db.prepare('INSERT INTO payload (body) VALUES (?)');
  db.transaction(() => {
    for (let i = 0; i < PAYLOAD_ROWS; i += 1) fill.run(blob);
  })();
  t.true(fs.statSync(file).size + fs.statSync(`${file}-wal`).size > 30 * 2 ** 20);

  // This thread writes one row per turn of the event loop and records the longest time between two
  // turns while the copy runs: a copy on this thread would hold one turn for the whole copy.
  const tick = db.prepare('INSERT INTO ticks (at) VALUES (?)');
  let copying = false;
  let stop = false;
  let longestGap = 0;
  let writesDuringCopy = 0;
  const writer = (async () => {
    let last = performance.now();
    while (!stop) {
      tick.run(performance.now());
      const now = performance.now();
      if (copying) {
        longestGap = Math.max(longestGap, now - last);
        writesDuringCopy += 1;
      }
      last = now;
      await nextTurn();
    }
  })();
  await nextTurn();
  const rowsBefore = (db.prepare('SELECT COUNT(*) AS n FROM ticks').get() as { n: number }).n;
  const to = path.join(dir, 'copies', 'live.db');
  copying = true;
  const started = performance.now();
  const copy = await backupDatabase(db, to);
  const copyMs = performance.now() - started;
  copying = false;
  const rowsAfter = (db.prepare('SELECT COUNT(*) AS n FROM ticks').get() as { n: number }).n;
  stop = true;
  await writer;

  t.is(copy.copiedBy, 'worker');
  t.is(copy.why, undefined);
  t.is(copy.migration, 7);
  t.is(copy.bytes, fs.statSync(to).size);
  t.false(fs.existsSync(`${to}.partial`));
  // The loop kept turning and writing: its longest pause is far below the copy's own duration.
  t.true(writesDuringCopy >= 10, `${writesDuringCopy} writes during a copy of ${copyMs.toFixed(0)} ms`);
  t.true(
    longestGap < copyMs / 2,
    `longest pause of the event loop ${longestGap.toFixed(1)} ms during a copy of ${copyMs.toFixed(1)} ms`,
  );
  t.log(`copy ${copyMs.toFixed(0)} ms, longest loop pause ${longestGap.toFixed(1)} ms, ${writesDuringCopy} writes`);

  // Sound, complete, and of one point in time: every tick up to one moment and none after it.
  const check = await checkDatabaseOffLoop(to);
  t.is(check.integrity, 'ok');
  t.is(check.rows.payload, PAYLOAD_ROWS);
  const copied = new Database(to, { readonly: true });
  t.teardown(() => copied.close());
  const ticks = copied.prepare('SELECT COUNT(*) AS n, COALESCE(MAX(id), 0) AS last FROM ticks').get() as {
    n: number;
    last: number;
  };
  t.is(ticks.last, ticks.n, 'the copied ticks are a prefix of the writes: no row missing before the last');
  t.true(ticks.n >= rowsBefore && ticks.n <= rowsAfter, `${rowsBefore} <= ${ticks.n} <= ${rowsAfter}`);
  t.true(rowsAfter > ticks.n, 'writes went on after the copy read its snapshot');
});

test('a paced copy runs in synced steps inside one snapshot: other writes do not restart it, and it keeps to its rate', async (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'live.db');
  const db = openDatabase(file, { synchronous: 'NORMAL' });
  t.teardown(() => db.close());
  db.exec(`
    CREATE TABLE payload (id INTEGER PRIMARY KEY, body BLOB NOT NULL);
    CREATE TABLE ticks (id INTEGER PRIMARY KEY, at REAL NOT NULL);`);
  const fill = db.prepare('INSERT INTO payload (body) VALUES (?)');
  db.transaction(() => {
    for (let i = 0; i < 320; i += 1) fill.run(Buffer.alloc(64 * 1024, 7));
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  const bytes = fs.statSync(file).size;
  // A write per turn of this thread's loop, by another connection than the worker's: each would
  // restart a stepwise copy that did not hold its snapshot.
  const tick = db.prepare('INSERT INTO ticks (at) VALUES (?)');
  let stop = false;
  let writes = 0;
  const writer = (async () => {
    while (!stop) {
      tick.run(performance.now());
      writes += 1;
      await nextTurn();
    }
  })();
  await nextTurn();
  const rate = 10_000_000;
  const started = performance.now();
  const copy = await backupDatabase(db, path.join(dir, 'paced.db'), {
    pace: { syncEveryBytes: 2 ** 20, bytesPerSecond: rate },
  });
  const copyMs = performance.now() - started;
  const rowsAfter = (db.prepare('SELECT COUNT(*) AS n FROM ticks').get() as { n: number }).n;
  stop = true;
  await writer;
  t.is(copy.copiedBy, 'worker');
  // Never faster than its rate (a lower bound: a loaded machine only makes it slower).
  t.true(copyMs >= (bytes / rate) * 1000 * 0.8, `${bytes} bytes in ${copyMs.toFixed(0)} ms at ${rate} B/s`);
  t.true(writes >= 10, `${writes} writes during the copy`);
  const check = await checkDatabaseOffLoop(copy.file);
  t.is(check.integrity, 'ok');
  t.is(check.rows.payload, 320);
  const copied = new Database(copy.file, { readonly: true });
  t.teardown(() => copied.close());
  const ticks = copied.prepare('SELECT COUNT(*) AS n, COALESCE(MAX(id), 0) AS last FROM ticks').get() as {
    n: number;
    last: number;
  };
  t.is(ticks.last, ticks.n, 'one point in time: the copied ticks are a prefix of the writes');
  t.true(rowsAfter > ticks.n, `writes went on after the copy's snapshot (${ticks.n} copied of ${rowsAfter})`);
});

test('a database that exists only in memory is copied on this thread, and the copy says why', async (t) => {
  const dir = tempDir(t);
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES (1), (2), (3)');
  const copy = await backupDatabase(db, path.join(dir, 'memory.db'));
  t.is(copy.copiedBy, 'this thread');
  t.regex(copy.why ?? '', /only in memory/);
  t.is(copy.migration, 0);
  t.deepEqual((await checkDatabaseOffLoop(copy.file)).rows, { notes: 3 });
});

test('a database in rollback-journal mode is copied on this thread: a second reader would make its writers wait', async (t) => {
  const dir = tempDir(t);
  const db = new Database(path.join(dir, 'delete.db'));
  t.teardown(() => db.close());
  db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY); INSERT INTO notes DEFAULT VALUES');
  const copy = await backupDatabase(db, path.join(dir, 'copy.db'));
  t.is(copy.copiedBy, 'this thread');
  t.regex(copy.why ?? '', /delete journal mode/);
  t.deepEqual((await checkDatabaseOffLoop(copy.file)).rows, { notes: 1 });
});

test('a copy of a file that is not there fails and leaves nothing under either name', async (t) => {
  const dir = tempDir(t);
  const to = path.join(dir, 'copy.db');
  await t.throwsAsync(backupDatabase(path.join(dir, 'missing.db'), to), { message: /missing\.db/ });
  t.false(fs.existsSync(to));
  t.false(fs.existsSync(`${to}.partial`));
});
