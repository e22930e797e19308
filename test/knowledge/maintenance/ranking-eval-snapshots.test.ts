// tier: quick
/**
 * Stored ranking evaluation runs (feature ranking-eval-snapshots, ADR 0177): recorded from the admin
 * API's evaluation, listed newest first, read back, and compared two at a time.
 */
import test from 'ava';
import { startReviewHarness } from '../review-helpers.js';
import { compareEvalRuns, type EvalRunSummary } from '../../../domain/knowledge/retrieval/ranking-eval-compare.js';

const SNAP = '/admin/api/ranking-eval/snapshots';

test('Evaluation runs are stored with the figures of the live evaluation, listed over time and compared', async (t) => {
  const h = await startReviewHarness(t);
  const live = (await h.admin('GET', '/admin/api/ranking-eval?top_k=5')).body;
  const first = await h.admin('POST', SNAP, { label: 'baseline' });
  t.is(first.status, 201, first.text);
  t.like(first.body, {
    label: 'baseline',
    top_k: 5,
    total_queries: live.total_queries,
    passed_queries: live.passed_queries,
    mean_reciprocal_rank: live.mean_reciprocal_rank,
  });
  t.is(first.body.report.queries.length, live.queries.length);
  h.clock.advanceHours(24);
  const second = await h.admin('POST', SNAP, { top_k: 1, label: 'strict' });
  t.is(second.status, 201, second.text);
  t.is(second.body.top_k, 1);

  const list = (await h.admin('GET', `${SNAP}?limit=10`)).body;
  t.is(list.total, 2);
  t.deepEqual(
    list.runs.map((r: any) => r.run_id),
    [second.body.run_id, first.body.run_id],
  );
  t.false('report' in list.runs[0], 'the list carries figures, not full reports');
  const one = (await h.admin('GET', `${SNAP}/${first.body.run_id}`)).body;
  t.deepEqual(one.report.queries, first.body.report.queries);

  const compared = (await h.admin('GET', `${SNAP}/compare`)).body;
  t.is(compared.from.run_id, first.body.run_id);
  t.is(compared.to.run_id, second.body.run_id);
  const ranks = new Map(second.body.report.queries.map((q: any) => [q.id, q]));
  for (const q of compared.queries) {
    const before = first.body.report.queries.find((x: any) => x.id === q.id);
    const after = ranks.get(q.id) as any;
    t.is(q.from_rank, before.correct_rank);
    t.is(q.to_rank, after.correct_rank);
  }
  t.is(
    Object.values(compared.changes).reduce((a: number, b) => a + (b as number), 0),
    live.queries.length,
  );
  t.is(compared.pass_rate_delta, Math.round((compared.to.pass_rate - compared.from.pass_rate) * 1e6) / 1e6);
  const explicit = (await h.admin('GET', `${SNAP}/compare?from=${second.body.run_id}&to=${first.body.run_id}`)).body;
  t.is(explicit.from.run_id, second.body.run_id);
  t.is(explicit.changes.fixed, compared.changes.regressed, 'compared the other way, fixes are regressions');

  for (const [path, status, code] of [
    [`${SNAP}/nope`, 404, 'eval_run_not_found'],
    [`${SNAP}/compare?from=${first.body.run_id}`, 400, 'invalid_request'],
    [`${SNAP}/compare?from=${first.body.run_id}&to=nope`, 404, 'eval_run_not_found'],
  ] as const) {
    const res = await h.admin('GET', path);
    t.is(res.status, status, path);
    t.is(res.body.error.code, code);
  }
  for (const body of [{ top_k: 0 }, { top_k: 26 }, { label: '' }, { extra: 1 }]) {
    const res = await h.admin('POST', SNAP, body);
    t.is(res.status, 400, JSON.stringify(body));
  }
});

test('compareEvalRuns names each query as fixed, regressed, improved, worse, same, added or removed', (t) => {
  const run = (id: string, queries: [string, number | null, boolean][]): EvalRunSummary => ({
    run_id: id,
    created_at: '2026-01-01T00:00:00.000Z',
    svc_version: '0.1.0',
    top_k: 5,
    total_queries: queries.length,
    passed_queries: queries.filter((q) => q[2]).length,
    pass_rate: queries.filter((q) => q[2]).length / queries.length,
    mean_reciprocal_rank: 0.5,
    categories: [{ category: 'lexical', total_queries: 1, passed_queries: 1, pass_rate: 1, mean_reciprocal_rank: 1 }],
    queries: queries.map(([qid, rank, passed]) => ({
      id: qid,
      category: 'lexical',
      correct_rank: rank,
      reciprocal_rank: rank === null ? 0 : 1 / rank,
      passed,
    })),
  });
  const out = compareEvalRuns(
    run('a', [
      ['fix', null, false],
      ['reg', 1, true],
      ['up', 3, true],
      ['down', 1, true],
      ['same', 2, true],
      ['gone', 1, true],
    ]),
    run('b', [
      ['fix', 1, true],
      ['reg', null, false],
      ['up', 2, true],
      ['down', 2, true],
      ['same', 2, true],
      ['new', 1, true],
    ]),
  );
  t.deepEqual(Object.fromEntries(out.queries.map((q) => [q.id, q.change])), {
    down: 'worse',
    fix: 'fixed',
    gone: 'removed',
    new: 'added',
    reg: 'regressed',
    same: 'same',
    up: 'improved',
  });
  t.deepEqual(out.changes, { fixed: 1, regressed: 1, improved: 1, worse: 1, same: 1, added: 1, removed: 1 });
});
