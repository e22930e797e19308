// tier: full
/**
 * Knowledge store backup and restore over the admin API (feature snapshot-backup-restore and the
 * backup and restore families, ADR 0174): a real store on real sockets, real SQLite files.
 */
import fs from 'node:fs';
import test from 'ava';
import Database from 'better-sqlite3';
import { startHarness, request, axisVector, type Harness } from '../knowledge-harness.js';
import { namespaceTables } from '../../../store/knowledge/namespace-data.js';

const ns = (name: string) => `/v1/namespaces/${name}`;

/** Rows of namespace `name` in every table that has an ns_id column, by table. */
function rowCounts(h: Harness, name: string): Record<string, number> {
  const db = h.store.services.core.db;
  const id = (
    db.prepare("SELECT id FROM kn_namespaces WHERE tenant = 'default' AND name = ?").get(name) as { id: number }
  ).id;
  const out: Record<string, number> = {};
  for (const t of namespaceTables(db))
    out[t.name] = (db.prepare(`SELECT count(*) AS n FROM "${t.name}" WHERE ns_id = ?`).get(id) as { n: number }).n;
  out.kn_vec_4 = (db.prepare('SELECT count(*) AS n FROM kn_vec_4 WHERE ns_id = ?').get(id) as { n: number }).n;
  out.kn_text = (
    db
      .prepare('SELECT count(*) AS n FROM kn_text WHERE rowid IN (SELECT vid FROM kn_versions WHERE ns_id = ?)')
      .get(id) as {
      n: number;
    }
  ).n;
  return out;
}

async function seed(h: Harness, name: string, n: number) {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await h.write(name, {
      content: `${name} fact number ${i} about the billing ledger`,
      source_id: i % 2 === 0 ? 'runbook' : 'wiki',
      vector: axisVector(4, i % 4, 0.1),
      ...(ids.length > 0 ? { edges: [{ to: ids[0], type: 'supports' }] } : {}),
    });
    ids.push(r.node_id);
  }
  // Feedback, a new version and a review decision: rows in the feedback and review tables too.
  await h.call('POST', `${ns(name)}/nodes/${ids[1]}/validate`);
  await h.call('POST', `${ns(name)}/nodes/${ids[2]}/refute`);
  await h.call('POST', `${ns(name)}/nodes/${ids[0]}/retract-source`, { source_id: 'runbook', reason: 'outdated' });
  return ids;
}

async function backup(h: Harness, body: Record<string, unknown>) {
  const res = await h.admin('POST', '/admin/api/backups', body);
  if (res.status !== 201) throw new Error(`backup failed ${res.status}: ${res.text}`);
  return res.body;
}

test('A namespace restore brings back every row of that namespace and leaves the others as they are', async (t) => {
  const h = await startHarness(t);
  const ids = await seed(h, 'alpha', 6);
  await seed(h, 'beta', 3);
  const before = rowCounts(h, 'alpha');
  t.true(before.kn_versions! > 6 && before.kn_feedback_events! > 0 && before.kn_edges! > 0 && before.kn_vec_4! > 0);
  const retrievedBefore = await h.retrieve('alpha', { vector: axisVector(4, 1), top_k: 3 });

  const record = await backup(h, { scope: 'namespace', namespace: 'alpha' });
  t.like(record, { scope: 'namespace', tenant: 'default', namespace: 'alpha', origin: 'taken' });
  t.regex(record.sha256, /^[0-9a-f]{64}$/);
  t.deepEqual(
    record.namespaces.map((n: any) => [n.name, n.nodes, n.versions, n.edges, n.vectors]),
    [['alpha', 6, before.kn_versions, before.kn_edges, before.kn_vec_4]],
  );

  // After the backup: alpha changes, beta changes.
  const later = await h.write('alpha', {
    content: 'written after the backup',
    source_id: 'wiki',
    vector: axisVector(4, 1),
  });
  await h.call('POST', `${ns('alpha')}/nodes/${ids[3]}/stale`);
  const betaLater = await h.write('beta', { content: 'beta after the backup', source_id: 'wiki' });
  const betaCounts = rowCounts(h, 'beta');

  const restored = await h.admin('POST', `/admin/api/backups/${record.id}/restore`, { scope: 'namespace' });
  t.is(restored.status, 200, restored.text);
  t.like(restored.body, { scope: 'namespace', removed: [] });
  t.deepEqual(
    restored.body.restored.map((r: any) => r.namespace),
    ['alpha'],
  );

  t.deepEqual(rowCounts(h, 'alpha'), before, 'every table holds the rows it held at the backup');
  t.deepEqual(rowCounts(h, 'beta'), betaCounts, 'the other namespace is untouched');
  t.is((await h.call('GET', `${ns('alpha')}/nodes/${later.node_id}`)).status, 404, 'the later write is gone');
  t.is((await h.call('GET', `${ns('beta')}/nodes/${betaLater.node_id}`)).status, 200);
  // The in-memory vector index follows the restored rows: the same ranking as before the backup.
  const retrievedAfter = await h.retrieve('alpha', { vector: axisVector(4, 1), top_k: 3 });
  t.deepEqual(
    retrievedAfter.map((r) => [r.id, r.version]),
    retrievedBefore.map((r) => [r.id, r.version]),
  );
  // The store keeps working: a new write and its retrieval.
  const next = await h.write('alpha', { content: 'after the restore', source_id: 'wiki', vector: axisVector(4, 2) });
  t.true((await h.retrieve('alpha', { vector: axisVector(4, 2), top_k: 10 })).some((r) => r.id === next.node_id));
  t.is((await h.call('GET', `${ns('alpha')}/nodes/${ids[1]}`)).status, 200);
});

test('A store backup taken while writes run restores every namespace and removes the ones made later', async (t) => {
  const h = await startHarness(t);
  await seed(h, 'one', 4);
  await seed(h, 'two', 2);
  // Writers keep writing while the backup runs; the backup holds a consistent state.
  let writing = true;
  const writer = (async () => {
    let i = 0;
    while (writing) await h.write('one', { content: `concurrent write ${i++}`, source_id: 'wiki' });
    return i;
  })();
  const record = await backup(h, { scope: 'store' });
  writing = false;
  const concurrent = await writer;
  t.is(record.scope, 'store');
  t.is(record.tenant, null);
  const inBackup = record.namespaces.find((n: any) => n.name === 'one');
  t.truthy(inBackup);
  t.true(
    inBackup.nodes >= 4 && inBackup.nodes <= 4 + concurrent,
    'a state between the start and the end of the writes',
  );
  // The copy is one consistent state: intact, every reference resolves, the text index matches the versions.
  const file = h.store.maintenance.backups.fileOf('default', record.id).file;
  const copy = new Database(file, { readonly: true });
  t.is(copy.pragma('integrity_check', { simple: true }), 'ok');
  t.deepEqual(copy.pragma('foreign_key_check'), []);
  t.is(
    copy
      .prepare('SELECT count(*) FROM kn_nodes n WHERE NOT EXISTS (SELECT 1 FROM kn_versions v WHERE v.node_id = n.id)')
      .pluck()
      .get(),
    0,
  );
  t.is(copy.prepare("SELECT value FROM store_meta WHERE key = 'backup.scope'").pluck().get(), 'store');
  copy.close();

  await h.write('three', { content: 'a namespace made after the backup', source_id: 'wiki' });
  await h.write('two', { content: 'two after the backup', source_id: 'wiki' });
  const res = await h.admin('POST', `/admin/api/backups/${record.id}/restore`, { scope: 'store' });
  t.is(res.status, 200, res.text);
  t.deepEqual(res.body.removed, [{ tenant: 'default', namespace: 'three' }]);
  t.deepEqual(res.body.restored.map((r: any) => r.namespace).sort(), ['one', 'two']);
  t.is((await h.call('POST', `${ns('three')}/retrieve`, { text: 'namespace' })).status, 404);
  const one = rowCounts(h, 'one');
  t.is(one.kn_nodes, inBackup.nodes);
  t.is(one.kn_versions, inBackup.versions);
  // Listing shows the backup with its checksum; a download is the same bytes.
  const listed = (await h.admin('GET', '/admin/api/backups')).body.backups;
  t.deepEqual(
    listed.map((b: any) => b.id),
    [record.id],
  );
  const download = await fetch(`${h.store.adminUrl}/admin/api/backups/${record.id}/file`);
  t.is(download.headers.get('x-content-sha256'), record.sha256);
  t.is((await download.arrayBuffer()).byteLength, record.bytes);
});

test('Corrupt, truncated, foreign, newer and changed backups are refused with a 4xx and change nothing', async (t) => {
  const h = await startHarness(t);
  await seed(h, 'keep', 3);
  const before = rowCounts(h, 'keep');
  const record = await backup(h, { scope: 'namespace', namespace: 'keep' });
  const { file } = h.store.maintenance.backups.fileOf('default', record.id);
  const good = fs.readFileSync(file);
  const upload = (bytes: Buffer) =>
    request(`${h.store.adminUrl}/admin/api/backups`, {
      method: 'POST',
      headers: { 'content-type': 'application/vnd.sqlite3' },
      body: bytes,
    });

  const garbage = await upload(Buffer.from('this is not a database at all, just some bytes'.repeat(20)));
  t.is(garbage.status, 422);
  t.is(garbage.body.error.code, 'backup_corrupt');
  const truncated = await upload(good.subarray(0, Math.floor(good.length / 2)));
  t.is(truncated.status, 422, truncated.text);
  t.is(truncated.body.error.code, 'backup_corrupt');

  const dir = fs.mkdtempSync(`${file}-t`);
  const foreignFile = `${dir}/foreign.db`;
  const foreign = new Database(foreignFile);
  foreign.exec(
    "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT, checksum TEXT, applied_at TEXT); INSERT INTO schema_migrations VALUES (1, 'control-core', 'x', 'now'); CREATE TABLE apps (id TEXT)",
  );
  foreign.close();
  const foreignRes = await upload(fs.readFileSync(foreignFile));
  t.is(foreignRes.status, 422);
  t.is(foreignRes.body.error.code, 'backup_foreign');

  const newerFile = `${dir}/newer.db`;
  fs.copyFileSync(file, newerFile);
  const newer = new Database(newerFile);
  newer.prepare("INSERT INTO schema_migrations VALUES (99, 'from-the-future', 'x', 'now')").run();
  newer.close();
  const newerRes = await upload(fs.readFileSync(newerFile));
  t.is(newerRes.status, 422);
  t.is(newerRes.body.error.code, 'backup_newer_version');
  t.regex(newerRes.body.error.message, /migration 99/);

  // Nothing refused was kept; the good file uploads and lists.
  t.is((await h.admin('GET', '/admin/api/backups')).body.backups.length, 1);
  const ok = await upload(good);
  t.is(ok.status, 201, ok.text);
  t.like(ok.body, { origin: 'uploaded', scope: 'namespace', namespace: 'keep', sha256: record.sha256 });

  // A stored file changed on disk after it was recorded: refused before anything is touched.
  await h.write('keep', { content: 'written after the backup', source_id: 'wiki' });
  const changed = rowCounts(h, 'keep');
  const bytes = Buffer.from(good);
  bytes[bytes.length - 100] = bytes[bytes.length - 100]! ^ 0xff;
  fs.writeFileSync(file, bytes);
  const tampered = await h.admin('POST', `/admin/api/backups/${record.id}/restore`, { scope: 'namespace' });
  t.is(tampered.status, 422);
  t.is(tampered.body.error.code, 'backup_checksum_mismatch');
  t.deepEqual(rowCounts(h, 'keep'), changed, 'a refused restore changes nothing');
  t.notDeepEqual(changed, before);

  // Bad requests answer the error shape.
  for (const [body, status] of [
    [{}, 400],
    [{ scope: 'namespace' }, 400],
    [{ scope: 'everything' }, 400],
    [{ scope: 'namespace', namespace: 'missing' }, 404],
  ] as const) {
    const res = await h.admin('POST', '/admin/api/backups', body);
    t.is(res.status, status, JSON.stringify(body));
    t.is(typeof res.body.error.code, 'string');
  }
  t.is((await h.admin('POST', '/admin/api/backups/kb-nope/restore', { scope: 'namespace' })).status, 404);
  t.is((await h.admin('POST', `/admin/api/backups/${ok.body.id}/restore`, { scope: 'store' })).status, 400);
  const other = await h.admin('POST', `/admin/api/backups/${ok.body.id}/restore`, {
    scope: 'namespace',
    namespace: 'x',
  });
  t.is(other.status, 404);
  t.is(other.body.error.code, 'backup_namespace_not_found');
  fs.rmSync(dir, { recursive: true, force: true });
});

test('What an interrupted backup leaves is never listed and is swept at start', async (t) => {
  const h = await startHarness(t);
  await h.write('n', { content: 'one node', source_id: 'docs' });
  const record = await backup(h, { scope: 'namespace', namespace: 'n' });
  const { file } = h.store.maintenance.backups.fileOf('default', record.id);
  const dir = file.slice(0, file.lastIndexOf('/'));
  // The backup's own inspection copy closes after the record is written: its -wal and -shm go then.
  const ownInspection = () => fs.readdirSync(dir).some((f) => f.startsWith(`${record.id}.sqlite.inspect`));
  await new Promise<void>((resolve, reject) => {
    const watcher = fs.watch(dir, () => {
      if (!ownInspection()) done();
    });
    const timer = setTimeout(() => done(new Error(`the inspection files of ${record.id} stayed`)), 10_000);
    const done = (error?: Error) => {
      watcher.close();
      clearTimeout(timer);
      if (error) reject(error);
      else resolve();
    };
    if (!ownInspection()) done();
  });
  // A kill -9 between the steps of a backup: a partial copy, a copy without its record, an inspection copy.
  fs.writeFileSync(`${dir}/kb-20260101t000000z-0000abcd.sqlite.partial`, 'half');
  fs.copyFileSync(file, `${dir}/kb-20260101t000000z-0000beef.sqlite`);
  fs.writeFileSync(`${dir}/kb-20260101t000000z-0000beef.sqlite.inspect`, 'x');
  t.deepEqual(
    (await h.admin('GET', '/admin/api/backups')).body.backups.map((b: any) => b.id),
    [record.id],
  );
  t.deepEqual(h.store.maintenance.backups.sweep().sort(), [
    'kb-20260101t000000z-0000abcd.sqlite.partial',
    'kb-20260101t000000z-0000beef.sqlite',
    'kb-20260101t000000z-0000beef.sqlite.inspect',
  ]);
  t.deepEqual(fs.readdirSync(dir).sort(), [`${record.id}.json`, `${record.id}.sqlite`]);
});
