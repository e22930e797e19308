// tier: quick
/**
 * Nodes written by `POST /acquisition/execute` (auto-admission) and by `POST /recovery/reconcile`
 * count as writes: in `svc_knowledge_writes_total` (whose rate is the dashboard's write rate) and in
 * `/v1/stats`, with the outcome a `POST /write` of them would have.
 */
import test from 'ava';
import { openKnowledgeStore } from '../../../store/open-stores.js';
import { createKnowledgeServices } from '../../../knowledge/index.js';
import { startKnowledgeStore } from '../../../wiring/knowledge-store.js';
import { silentLogger } from '../../../platform/logger.js';
import { testConfig } from '../../helpers/test-config.js';
import { parseExposition, samplesOf } from '../../observability/exposition.js';
import { request } from '../knowledge-harness.js';
import { startReceiver, startReviewHarness } from '../review-helpers.js';

const NS = '/v1/namespaces/n';

/** The write counter by outcome for namespaces in general mode, read from the admin `/metrics`. */
async function writeCounts(adminUrl: string): Promise<Record<string, number>> {
  const res = await request(`${adminUrl}/metrics`);
  const families = parseExposition(res.text);
  const out: Record<string, number> = {};
  for (const outcome of ['admitted', 'rejected', 'deduplicated', 'error'])
    out[outcome] = samplesOf(families, 'svc_knowledge_writes_total', { mode: 'general', outcome })[0]?.value ?? 0;
  return out;
}

/** The dashboard's own ingest figures (`/admin/api/metrics`, beside its rate from the write counter). */
async function dashboardIngest(adminUrl: string): Promise<{ total: number; admitted: number; rejected: number }> {
  return (await request(`${adminUrl}/admin/api/metrics`)).body.ingest;
}

async function stats(url: string) {
  const body = (await request(`${url}/v1/stats`)).body;
  return { total: body.ingest_total, admitted: body.ingest_admitted, rejected: body.ingest_rejected };
}

test('Nodes an acquisition execution admits count as writes with their outcomes; a preview counts none', async (t) => {
  const h = await startReviewHarness(t, {
    SVC_KNOWLEDGE_ALLOW_PRIVATE_TARGETS: 'true',
    SVC_KNOWLEDGE_DEDUP_DEFAULT: 'true',
  });
  await h.write('n', { content: 'Old deploy note', source_id: 'chat', labels: ['ops'], confidence: 0.2 });
  t.is((await h.call('POST', `${NS}/sources/label`, { source_id: 'bad', credibility: 0 })).status, 200);
  const receiver = await startReceiver(t, () => ({
    status: 200,
    body: JSON.stringify({
      evidence: [
        { content: 'Deploys run from the release pipeline', source_id: 'runbook', confidence: 0.8 },
        { content: 'Deploys are done by hand on Fridays', source_id: 'bad' },
        { content: 'Old deploy note', source_id: 'wiki' },
      ],
    }),
  }));
  const task = (await h.call('POST', `${NS}/acquisition/plan`, { budget: 1 })).body.tasks[0];
  t.truthy(task, 'the plan has a task');

  const counts0 = await writeCounts(h.store.adminUrl);
  const stats0 = await stats(h.store.url);
  const dashboard0 = await dashboardIngest(h.store.adminUrl);
  const preview = await h.call('POST', `${NS}/acquisition/execute`, {
    task_ids: [task.id],
    connector: { url: receiver.url },
  });
  t.is(preview.status, 200, preview.text);
  t.deepEqual(await writeCounts(h.store.adminUrl), counts0, 'a preview writes and counts nothing');

  const res = await h.call('POST', `${NS}/acquisition/execute`, {
    execute: true,
    task_ids: [task.id],
    connector: { url: receiver.url },
  });
  t.is(res.status, 200, res.text);
  const admitted = res.body.results[0].admitted as any[];
  t.deepEqual(
    admitted.map((a) => [a.admitted, a.deduplicated ?? false]),
    [
      [true, false],
      [false, false],
      [true, true],
    ],
  );

  const counts1 = await writeCounts(h.store.adminUrl);
  t.deepEqual(
    {
      admitted: counts1.admitted! - counts0.admitted!,
      rejected: counts1.rejected! - counts0.rejected!,
      deduplicated: counts1.deduplicated! - counts0.deduplicated!,
      error: counts1.error! - counts0.error!,
    },
    { admitted: 1, rejected: 1, deduplicated: 1, error: 0 },
  );
  const stats1 = await stats(h.store.url);
  t.deepEqual(
    {
      total: stats1.total - stats0.total,
      admitted: stats1.admitted - stats0.admitted,
      rejected: stats1.rejected - stats0.rejected,
    },
    { total: 3, admitted: 2, rejected: 1 },
  );
  const dashboard1 = await dashboardIngest(h.store.adminUrl);
  t.like(dashboard1, {
    total: dashboard0.total + 3,
    admitted: dashboard0.admitted + 2,
    rejected: dashboard0.rejected + 1,
  });

  // Executing the same task again fetches nothing: the admitted candidates are not written again, and the
  // one the admission check refused (still staged) is tried again and refused again, one more rejection.
  const again = await h.call('POST', `${NS}/acquisition/execute`, {
    execute: true,
    task_ids: [task.id],
    connector: { url: receiver.url },
  });
  t.is(again.status, 200, again.text);
  t.is(again.body.results[0].status, 'already_succeeded');
  t.is(receiver.received.length, 1);
  t.deepEqual(await writeCounts(h.store.adminUrl), { ...counts1, rejected: counts1.rejected! + 1 });
});

test("Nodes admitted through the origin's multi-connector form count as writes, once per connector run", async (t) => {
  const h = await startReviewHarness(t, { SVC_KNOWLEDGE_ALLOW_PRIVATE_TARGETS: 'true' });
  await h.write('n', { content: 'Old deploy note', source_id: 'chat', labels: ['ops'], confidence: 0.2 });
  const search = await startReceiver(t, () => ({
    status: 200,
    body: JSON.stringify({ items: [{ title: 'Release pipeline', snippet: 'Deploys run from the release pipeline' }] }),
  }));
  const crawler = await startReceiver(t, () => ({
    status: 200,
    body: JSON.stringify([
      { content: 'Deploy notes live in the runbook' },
      { content: 'Deploys need a change ticket' },
    ]),
  }));
  const task = (await h.call('POST', `${NS}/acquisition/plan`, { budget: 1 })).body.tasks[0];
  const counts0 = await writeCounts(h.store.adminUrl);
  const stats0 = await stats(h.store.url);
  const res = await h.call('POST', `${NS}/acquisition/execute`, {
    execute: true,
    task_ids: [task.id],
    connectors: [
      { id: 'search', type: 'search', endpoint: search.url },
      { id: 'crawler', type: 'crawler', endpoint: crawler.url },
    ],
  });
  t.is(res.status, 200, res.text);
  t.is(res.body.summary.written_nodes, 3);
  t.is((await writeCounts(h.store.adminUrl)).admitted! - counts0.admitted!, 3);
  t.is((await stats(h.store.url)).total - stats0.total, 3);
});

/** Records write intents exactly as the write path does, without applying them: writes cut off by a crash. */
function interruptedWrites(dataDir: string, contents: readonly string[]): void {
  const store = openKnowledgeStore(dataDir);
  try {
    const services = createKnowledgeServices(store.db);
    const namespace = services.core.namespaceForWrite('default', 'n', undefined);
    for (const content of contents) {
      services.core.intents.insert({
        id: services.core.newId(),
        ns_id: namespace.id,
        kind: 'write',
        node_id: services.core.newId(),
        request_id: null,
        payload: JSON.stringify({ request: { content, source_id: 's' } }),
        created_at: services.core.nextTx(),
      });
    }
  } finally {
    store.db.close();
  }
}

test('Writes replayed by reconcile count as writes; a preview of the replay counts none', async (t) => {
  const config = testConfig(t);
  interruptedWrites(config.dataDir, ['lost in the crash', 'also lost in the crash']);
  const store = await startKnowledgeStore(config, silentLogger());
  t.teardown(() => store.close());
  const reconcile = (execute: boolean) =>
    request(`${store.url}${NS}/recovery/reconcile`, { method: 'POST', json: { execute } });

  const counts0 = await writeCounts(store.adminUrl);
  const stats0 = await stats(store.url);
  const dashboard0 = await dashboardIngest(store.adminUrl);
  const preview = await reconcile(false);
  t.is(preview.status, 200, preview.text);
  t.is(preview.body.steps.length, 2);
  t.deepEqual(await writeCounts(store.adminUrl), counts0);

  const run = await reconcile(true);
  t.is(run.status, 200, run.text);
  t.deepEqual(
    run.body.steps.map((s: any) => s.action),
    ['replayed', 'replayed'],
  );
  const counts1 = await writeCounts(store.adminUrl);
  t.is(counts1.admitted! - counts0.admitted!, 2);
  const stats1 = await stats(store.url);
  t.deepEqual(
    { total: stats1.total - stats0.total, admitted: stats1.admitted - stats0.admitted },
    { total: 2, admitted: 2 },
  );
  t.is((await dashboardIngest(store.adminUrl)).total, dashboard0.total + 2);

  // Nothing is left to replay: a second run counts nothing.
  t.like((await reconcile(true)).body, { steps: [], remaining: 0 });
  t.deepEqual(await writeCounts(store.adminUrl), counts1);
});
