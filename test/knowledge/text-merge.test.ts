// tier: quick
/**
 * The text index's merge slices (docs/adr/0207): segment counts stay bounded under a stream of small
 * write transactions, merging changes no search result, migration 8 and a rollback to a release
 * without the policy, and idle-time slices of the group commit.
 */
import test from 'ava';
import { openDatabase, type Db } from '../../store/database.js';
import { migrate } from '../../store/migrate.js';
import { KNOWLEDGE_MIGRATIONS } from '../../store/knowledge/migrations.js';
import { NodeStore } from '../../store/knowledge/node-store.js';
import {
  CATCH_UP_PAGES,
  decodeStructure,
  textMergeOf,
  textSegments,
  type TextSegments,
} from '../../store/knowledge/text-merge.js';
import { GroupCommit, IDLE_MS } from '../../knowledge/core/group-commit.js';
import { tempDir } from '../helpers/temp-dir.js';

const WORDS = 'alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega river stone cloud'.split(' ');

/** Deterministic text of `n` words: a word and a number, so terms repeat across rows but not always. */
function texts(seed: number, count: number, n = 30): string[] {
  let s = seed;
  const next = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
  return Array.from({ length: count }, () =>
    Array.from({ length: n }, () => `${WORDS[Math.floor(next() * WORDS.length)]}${Math.floor(next() * 400)}`).join(' '),
  );
}

function store(t: Parameters<typeof tempDir>[0], migrations = KNOWLEDGE_MIGRATIONS): Db {
  const db = openDatabase(`${tempDir(t)}/k.db`);
  db.pragma('synchronous = OFF'); // a test file: durability is not what is tested here
  t.teardown(() => db.close());
  migrate(db, migrations);
  return db;
}

const insert = (db: Db) => db.prepare('INSERT INTO kn_text (rowid, content, ns_id, live) VALUES (?, ?, 1, 1)');
const most = (s: TextSegments | undefined) => Math.max(0, ...(s?.levels.map((l) => l.segments) ?? []));

/** Writes `rows` in transactions of 1-3 rows; with `policy`, each pays its merge slice as a group does. */
function stream(db: Db, rows: readonly string[], policy: boolean, from = 1): { most: number; segments: number } {
  const ins = insert(db);
  const merge = policy ? textMergeOf(db) : undefined;
  let worst = 0;
  let segments = 0;
  for (let i = 0; i < rows.length;) {
    const n = Math.min(rows.length - i, 1 + (i % 3));
    db.transaction(() => {
      const mark = merge?.mark();
      for (let k = 0; k < n; k++) ins.run(from + i + k, rows[i + k]);
      merge?.afterWrite(mark);
    })();
    i += n;
    const now = textSegments(db);
    worst = Math.max(worst, most(now));
    segments = Math.max(segments, now?.segments ?? 0);
  }
  return { most: worst, segments };
}

/** Every match of `query`, by bm25 rank with its score, and by rowid: what searches read. */
function answers(db: Db, query: string) {
  const ranked = db
    .prepare('SELECT rowid, bm25(kn_text) AS score FROM kn_text WHERE kn_text MATCH ? AND live = 1 ORDER BY rank')
    .all(query) as { rowid: number; score: number }[];
  const newest = db.prepare('SELECT rowid FROM kn_text WHERE kn_text MATCH ? ORDER BY rowid DESC LIMIT 20').all(query);
  return { ranked: ranked.map((r) => [r.rowid, r.score.toFixed(9)]), newest };
}

const QUERIES = [
  'alpha1',
  'beta2 OR stone7',
  'river1*',
  'cloud3 OR omega99 OR kappa12',
  'sigma5 AND lambda1*',
  'gamma*',
];

test('a stream of small writes keeps every level below automerge lumps: the slices run and bound the segments', (t) => {
  const rows = texts(1, 600);
  const withPolicy = store(t);
  const bounded = stream(withPolicy, rows, true);
  const stats = textMergeOf(withPolicy).stats();
  t.true(stats.slices > 0 && stats.pagesBudgeted > 0, JSON.stringify(stats));
  // A level is merged once it holds 4 segments; the newest segment may join it before its slice.
  t.true(bounded.most <= 5, `a level held ${bounded.most} segments`);
  // The same stream with automerge off and no slices piles up to FTS5's crisis merge (16 a level).
  const unmerged = stream(store(t), rows, false);
  t.true(unmerged.most >= 12, `without slices a level held only ${unmerged.most} segments`);
  t.true(bounded.segments < unmerged.segments, `${bounded.segments} segments against ${unmerged.segments}`);
});

test('a merged and an unmerged index answer every query the same, in the same order with the same scores', (t) => {
  const rows = texts(2, 400);
  const merged = store(t);
  const unmerged = store(t);
  stream(merged, rows, true);
  stream(unmerged, rows, false);
  // Updates and deletes leave delete markers in later segments, which merging folds away.
  for (const db of [merged, unmerged])
    db.transaction(() => {
      const mark = db === merged ? textMergeOf(db).mark() : undefined;
      for (let vid = 5; vid < 400; vid += 7) db.prepare('UPDATE kn_text SET live = 0 WHERE rowid = ?').run(vid);
      for (let vid = 3; vid < 400; vid += 11) db.prepare('DELETE FROM kn_text WHERE rowid = ?').run(vid);
      if (db === merged) textMergeOf(db).afterWrite(mark);
    })();
  merged.prepare("INSERT INTO kn_text (kn_text) VALUES ('optimize')").run(); // all the way: one segment
  t.is(textSegments(merged)?.segments, 1);
  t.true((textSegments(unmerged)?.segments ?? 0) > 10);
  for (const q of QUERIES) {
    const a = answers(merged, q);
    t.true(a.ranked.length > 0, q);
    t.deepEqual(a, answers(unmerged, q), q);
  }
});

test('migration 8 turns automerge off on a store with rows; the old release on it still answers right and stays bounded', (t) => {
  const db = store(t, KNOWLEDGE_MIGRATIONS.slice(0, 7));
  const rows = texts(3, 600);
  stream(db, rows.slice(0, 200), false); // the old release, automerge on
  const before = QUERIES.map((q) => answers(db, q));
  t.deepEqual(
    migrate(db, KNOWLEDGE_MIGRATIONS).applied.map((m) => m.name),
    ['text-index-merge-in-slices'],
  );
  const config = db.prepare("SELECT v FROM kn_text_config WHERE k = 'automerge'").pluck().get();
  t.is(config, 0);
  t.deepEqual(
    QUERIES.map((q) => answers(db, q)),
    before,
  );
  // A rollback: the previous release writes on this schema without the policy. FTS5 merges only at its
  // crisis threshold, so a level never holds more than 16 segments, and every row is found.
  const rolledBack = stream(db, rows.slice(200), false, 201);
  t.true(rolledBack.most <= 16, `a level held ${rolledBack.most} segments`);
  const reference = store(t);
  stream(reference, rows, true);
  t.deepEqual(
    QUERIES.map((q) => answers(db, q)),
    QUERIES.map((q) => answers(reference, q)),
  );
  // Upgraded again, the policy owes the levels the old release left due, and empty groups pay it.
  const nodes = new NodeStore(db);
  const owed = nodes.textMerge.stats().debt;
  if (most(textSegments(db)) >= 4) t.true(owed > 0, 'due levels are owed');
  for (let i = 0; i < 200 && nodes.textMerge.pending; i++) db.transaction(() => nodes.deferText(() => undefined))();
  t.false(nodes.textMerge.pending);
  t.true(most(textSegments(db)) < 4, `a level still holds ${most(textSegments(db))} segments`);
});

test('a group pays its own merge work plus a bounded share of debt others left; idle groups pay the rest', async (t) => {
  const db = store(t);
  const nodes = new NodeStore(db);
  const commits = new GroupCommit(
    db,
    (fn) => nodes.deferText(fn),
    () => nodes.textMerge.pending,
  );
  t.teardown(() => commits.close());
  // A writer outside the group commit (a maintenance path that does not call the policy) adds pages.
  const ins = insert(db);
  const rows = texts(4, 1200, 60);
  for (let i = 0; i < rows.length; i += 40)
    db.transaction(() => rows.slice(i, i + 40).forEach((text, k) => ins.run(i + k + 1, text)))();
  t.true(most(textSegments(db)) >= 4, 'levels are due');
  const budget = nodes.textMerge.stats().pagesBudgeted;
  let first = nodes.textMerge.stats();
  // Read right after the group's commit: an idle group may run before the group's fsync answers.
  await commits.run((after) => {
    ins.run(5000, 'one more row');
    after(() => (first = nodes.textMerge.stats()));
  });
  // Its own page at most times the levels, plus the catch-up share: not the whole debt at once.
  t.true(first.pagesBudgeted - budget <= CATCH_UP_PAGES + 10 * (textSegments(db)?.levels.length ?? 1));
  t.true(first.debt > 0, 'debt is left for later slices');
  const groups = commits.stats().groups;
  // With no write, empty groups run every IDLE_MS until nothing is owed.
  for (let waited = 0; nodes.textMerge.pending && waited < 20_000; waited += IDLE_MS)
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
  t.false(nodes.textMerge.pending);
  t.true(commits.stats().groups > groups, 'idle groups ran');
  t.true(most(textSegments(db)) < 4, `a level still holds ${most(textSegments(db))} segments`);
  t.deepEqual(db.prepare("SELECT rowid FROM kn_text WHERE kn_text MATCH 'one'").pluck().all(), [5000]);
});

test('the structure decoder reads the records SQLite writes, V1 and V2 (contentless-delete): one segment per commit', (t) => {
  const db = store(t);
  db.exec(`CREATE VIRTUAL TABLE v2 USING fts5(x, content = '', contentless_delete = 1);
    INSERT INTO v2 (v2, rank) VALUES ('automerge', 0);`);
  const rows = texts(5, 12);
  for (const [i, text] of rows.entries()) {
    insert(db).run(i + 1, text);
    db.prepare('INSERT INTO v2 (rowid, x) VALUES (?, ?)').run(i + 1, text);
  }
  const block = (table: string) => db.prepare(`SELECT block FROM ${table}_data WHERE id = 10`).pluck().get() as Buffer;
  t.is(block('v2').subarray(4, 8).toString('hex'), 'ff000001', 'a V2 record');
  for (const table of ['kn_text', 'v2']) {
    const shape = decodeStructure(block(table));
    t.like(shape, { segments: 12 }, table);
    t.is(shape.levels[0]?.segments, 12, table);
    t.true(shape.pages >= 12, table);
  }
  t.throws(() => decodeStructure(block('kn_text').subarray(0, 9)), { message: /ends inside a varint|does not add up/ });
});
