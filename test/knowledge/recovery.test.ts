// tier: quick
import test from 'ava';
import { openKnowledgeStore } from '../../store/open-stores.js';
import { createKnowledgeServices } from '../../knowledge/index.js';
import { startHarness } from './knowledge-harness.js';
import { testConfig } from '../helpers/test-config.js';
import { startKnowledgeStore } from '../../wiring/knowledge-store.js';
import { silentLogger } from '../../platform/logger.js';
import { request } from './knowledge-harness.js';

/** Records an intent exactly as the write path does, without applying it: a write cut off by a crash. */
function interruptedWrite(dataDir: string, tenant: string, ns: string, request: Record<string, unknown>): string {
  const store = openKnowledgeStore(dataDir);
  try {
    const services = createKnowledgeServices(store.db);
    const namespace = services.core.namespaceForWrite(tenant, ns, undefined);
    const id = services.core.newId();
    services.core.intents.insert({
      id,
      ns_id: namespace.id,
      kind: 'write',
      node_id: services.core.newId(),
      request_id: null,
      payload: JSON.stringify({ request }),
      created_at: services.core.nextTx(),
    });
    return id;
  } finally {
    store.db.close();
  }
}

test('recovery lists interrupted writes as pending and reconcile replays them', async (t) => {
  const config = testConfig(t);
  const intent = interruptedWrite(config.dataDir, 'default', 'n', {
    content: 'lost in the crash',
    source_id: 's',
    vector: [1, 0],
  });
  const store = await startKnowledgeStore(config, silentLogger());
  t.teardown(() => store.close());
  const pending = await request(`${store.url}/v1/namespaces/n/recovery/pending`);
  t.is(pending.status, 200);
  t.is(pending.body.total, 1);
  t.like(pending.body.pending[0], {
    id: intent,
    kind: 'write',
    attempts: 0,
    request: { content: 'lost in the crash' },
  });
  const preview = await request(`${store.url}/v1/namespaces/n/recovery/reconcile`, {
    method: 'POST',
    json: { execute: false },
  });
  t.like(preview.body, { execute: false, stopped: false, remaining: 1 });
  t.is(preview.body.steps[0].action, 'would_replay');
  const run = await request(`${store.url}/v1/namespaces/n/recovery/reconcile`, {
    method: 'POST',
    json: { execute: true },
  });
  t.like(run.body, { execute: true, stopped: false, remaining: 0 });
  t.is(run.body.steps[0].action, 'replayed');
  const node = await request(`${store.url}/v1/namespaces/n/nodes/${run.body.steps[0].node_id}`);
  t.is(node.body.content, 'lost in the crash');
  const results = await request(`${store.url}/v1/namespaces/n/retrieve`, { method: 'POST', json: { vector: [1, 0] } });
  t.is(results.body.results.length, 1);
});

test('reconcile stops at conflicting later state instead of duplicating it', async (t) => {
  const config = testConfig(t);
  const first = interruptedWrite(config.dataDir, 'default', 'n', { content: 'resubmitted fact', source_id: 's' });
  interruptedWrite(config.dataDir, 'default', 'n', { content: 'independent fact', source_id: 's' });
  const store = await startKnowledgeStore(config, silentLogger());
  t.teardown(() => store.close());
  // The client gave up and resubmitted the same content before reconciling.
  await request(`${store.url}/v1/namespaces/n/write`, {
    method: 'POST',
    json: { content: 'Resubmitted  fact', source_id: 's' },
  });
  const run = await request(`${store.url}/v1/namespaces/n/recovery/reconcile`, {
    method: 'POST',
    json: { execute: true },
  });
  t.true(run.body.stopped);
  t.is(run.body.steps.length, 1);
  t.like(run.body.steps[0], { intent_id: first, action: 'conflict' });
  t.is(run.body.remaining, 2);
  const pending = await request(`${store.url}/v1/namespaces/n/recovery/pending`);
  t.is(pending.body.pending[0].attempts, 1);
  t.regex(pending.body.pending[0].last_error, /same content was written after this intent/);
});

test('a write whose embedder fails leaves nothing pending and answers an error naming the embedder', async (t) => {
  const h = await startHarness(t, {
    SVC_KNOWLEDGE_EMBEDDER_URL: 'http://127.0.0.1:9/v1',
    SVC_KNOWLEDGE_EMBEDDER_TIMEOUT: '2s',
  });
  const res = await h.call('POST', '/v1/namespaces/n/write', { content: 'needs a vector', source_id: 's' });
  t.is(res.status, 503);
  t.is(res.body.error.code, 'embedder_unavailable');
  const pending = await h.call('GET', '/v1/namespaces/n/recovery/pending');
  t.is(pending.body.total, 0);
});

test('recovery endpoints validate their input', async (t) => {
  const h = await startHarness(t);
  await h.write('n', { content: 'x', source_id: 's' });
  t.is((await h.call('POST', '/v1/namespaces/n/recovery/reconcile', { execute: 'yes' })).status, 400);
  t.is((await h.call('GET', '/v1/namespaces/n/recovery/pending?limit=abc')).status, 400);
});

/** Writes a node and records a retract intent for it without applying it. */
function interruptedRetract(dataDir: string, ns: string, sourceId: string): { nodeId: string; intentId: string } {
  const store = openKnowledgeStore(dataDir);
  try {
    const services = createKnowledgeServices(store.db);
    const namespace = services.core.namespaceForWrite('default', ns, undefined);
    const nodeId = services.core.newId();
    services.writes.apply(
      namespace,
      {
        id: services.core.newId(),
        ns_id: namespace.id,
        kind: 'write',
        node_id: nodeId,
        request_id: null,
        payload: '{}',
        created_at: services.core.nextTx(),
        attempts: 0,
        last_error: null,
      },
      { request: { content: 'to be retracted', source_id: sourceId } },
      false,
    );
    const intentId = services.core.newId();
    const effectiveAt = services.core.now();
    services.core.intents.insert({
      id: intentId,
      ns_id: namespace.id,
      kind: 'retract_source',
      node_id: nodeId,
      request_id: null,
      payload: JSON.stringify({ nodeId, request: { source_id: sourceId, reason: 'crash' }, effectiveAt }),
      created_at: services.core.nextTx(),
    });
    return { nodeId, intentId };
  } finally {
    store.db.close();
  }
}

test('reconcile replays an interrupted retraction', async (t) => {
  const config = testConfig(t);
  const { nodeId, intentId } = interruptedRetract(config.dataDir, 'n', 's');
  const store = await startKnowledgeStore(config, silentLogger());
  t.teardown(() => store.close());
  const pending = await request(`${store.url}/v1/namespaces/n/recovery/pending`);
  t.like(pending.body.pending[0], { id: intentId, kind: 'retract_source', node_id: nodeId });
  const run = await request(`${store.url}/v1/namespaces/n/recovery/reconcile`, {
    method: 'POST',
    json: { execute: true },
  });
  t.like(run.body, {
    stopped: false,
    remaining: 0,
    steps: [{ intent_id: intentId, action: 'replayed', node_id: nodeId }],
  });
  const node = await request(`${store.url}/v1/namespaces/n/nodes/${nodeId}`);
  t.like(node.body, { retracted: true, source_ids: [] });
});

test('reconcile stops when the node changed after an interrupted retraction', async (t) => {
  const config = testConfig(t);
  const { nodeId, intentId } = interruptedRetract(config.dataDir, 'n', 's');
  const store = await startKnowledgeStore(config, silentLogger());
  t.teardown(() => store.close());
  // Another source corroborates the node after the intent was recorded.
  await request(`${store.url}/v1/namespaces/n/write`, {
    method: 'POST',
    json: { content: 'to be retracted', source_id: 'other', dedup: true },
  });
  const run = await request(`${store.url}/v1/namespaces/n/recovery/reconcile`, {
    method: 'POST',
    json: { execute: true },
  });
  t.like(run.body, { stopped: true, remaining: 1, steps: [{ intent_id: intentId, action: 'conflict' }] });
  const node = await request(`${store.url}/v1/namespaces/n/nodes/${nodeId}`);
  t.like(node.body, { retracted: false, source_ids: ['other', 's'] });
});
