// tier: full
/**
 * The doctor-sample-write check (ADR 0176): the store's sample write, retrieve and retract in a
 * scratch namespace leaves no row behind, needs the admin permission, and `svc doctor` runs it
 * against a running store and reports it like its other checks.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import type { DoctorReport } from '../../../domain/doctor/index.js';
import { runSvc } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { startHarness, type Harness } from '../knowledge-harness.js';

const ADMIN = 'team:read+write+admin:team-admin-secret';
const READER = 'team:read:team-read-secret';
const TOKENS = { SVC_KNOWLEDGE_TOKENS: [ADMIN, READER].join(',') };

/**
 * Row count of every table of knowledge.db (the text index's content and vector shadow tables
 * included), and the indexed terms of the text index. Left out: the FTS5 segment tables, which keep
 * delete markers until their next merge (no text of a deleted row can be found through them).
 */
function allRows(h: Harness): Record<string, number> {
  const db = h.store.services.core.db;
  const tables = db
    .prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%' AND name NOT IN ('sqlite_sequence', 'kn_text_data', 'kn_text_idx')",
    )
    .pluck()
    .all() as string[];
  return {
    ...Object.fromEntries(tables.map((n) => [n, db.prepare(`SELECT count(*) FROM "${n}"`).pluck().get() as number])),
    indexed_terms: db.prepare('SELECT count(*) FROM kn_text_vocab').pluck().get() as number,
    doctor_terms: db
      .prepare("SELECT count(*) FROM kn_text_vocab WHERE term LIKE 'doctorprob%'")
      .pluck()
      .get() as number,
  };
}

test('The sample write passes its four steps and leaves no row behind; it needs the admin permission', async (t) => {
  const h = await startHarness(t, TOKENS);
  await h.write('kept', { content: 'a node that must stay', source_id: 'docs', vector: [1, 0, 0] }, ADMIN);
  const before = allRows(h);
  const res = await h.admin('POST', '/admin/api/doctor/sample-write', {}, ADMIN);
  t.is(res.status, 200, res.text);
  t.is(res.body.check, 'doctor-sample-write');
  t.is(res.body.status, 'pass', JSON.stringify(res.body.steps));
  t.deepEqual(
    res.body.steps.map((s: any) => [s.step, s.ok]),
    [
      ['write', true],
      ['retrieve', true],
      ['retract', true],
      ['cleanup', true],
    ],
  );
  t.regex(res.body.namespace, /^svc-doctor-[0-9a-f]{12}$/);
  t.deepEqual(allRows(h), before, 'every table holds exactly the rows it held before');
  t.is(
    (await h.call('POST', `/v1/namespaces/${res.body.namespace}/retrieve`, { text: 'svc doctor' }, ADMIN)).status,
    404,
  );
  t.is((await h.retrieve('kept', { vector: [1, 0, 0] }, ADMIN)).length, 1);
  // Two runs do not meet: each has its own scratch namespace.
  const [a, b] = await Promise.all([
    h.admin('POST', '/admin/api/doctor/sample-write', {}, ADMIN),
    h.admin('POST', '/admin/api/doctor/sample-write', {}, ADMIN),
  ]);
  t.is(a.body.status, 'pass');
  t.is(b.body.status, 'pass');
  t.deepEqual(allRows(h), before);
  const denied = await h.admin('POST', '/admin/api/doctor/sample-write', {}, READER);
  t.is(denied.status, 403);
  t.is(typeof denied.body.error.code, 'string');
});

test('svc doctor runs the sample write against the running store and reports it with the other checks', async (t) => {
  const h = await startHarness(t, TOKENS);
  const adminPort = new URL(h.store.adminUrl).port;
  const root = tempDir(t, 'svc-doctor-kn-');
  fs.chmodSync(root, 0o755);
  const env = {
    SVC_DATA_DIR: path.join(root, 'data'),
    SVC_PORT: '0',
    SVC_KNOWLEDGE_PORT: '0',
    SVC_KNOWLEDGE_ADMIN_PORT: adminPort,
    SVC_POSTGRES_MANAGED: '',
    SVC_POSTGRES_HOST: '',
  };
  const before = allRows(h);
  const run = await runSvc(['doctor', '--json'], { env: { ...env, ...TOKENS } });
  const report = JSON.parse(run.stdout) as DoctorReport;
  const check = report.checks.find((c) => c.id === 'knowledge.sample-write');
  t.like(check, { status: 'pass', required: true });
  t.regex(check!.detail, /write, retrieve, retract and cleanup passed/);
  t.deepEqual(allRows(h), before);

  // Without an admin token the check cannot run: printed as a warning with its fix, not a pass.
  const noAdmin = await runSvc(['doctor'], { env: { ...env, SVC_KNOWLEDGE_TOKENS: READER } });
  t.regex(
    noAdmin.stdout,
    /^warn +knowledge store sample write \(doctor-sample-write\): no configured knowledge token grants admin/m,
  );
  t.regex(noAdmin.stdout, /fix: add a token tenant:admin:<secret>/);
  t.is(noAdmin.code, 0, 'an optional check that cannot run does not fail the doctor');
});
