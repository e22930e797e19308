// tier: quick
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import { startHarness } from './knowledge-harness.js';
import { HttpEmbedder } from '../../platform/outbound/http-embedder.js';

interface Received {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: any;
}

/** A local stand-in for an OpenAI-compatible embeddings endpoint: vectors from keyword presence. */
async function embeddingsReceiver(
  t: ExecutionContext,
  options: { dims?: number; hang?: boolean } = {},
): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw);
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      if (options.hang) return;
      const keywords = ['cat', 'dog', 'car', 'tree'];
      const dims = options.dims ?? 4;
      const data = (body.input as string[])
        .map((text, index) => ({
          object: 'embedding',
          index,
          embedding: Array.from({ length: dims }, (_, i) => (text.toLowerCase().includes(keywords[i % 4]!) ? 1 : 0.01)),
        }))
        .reverse();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data, model: body.model }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, received };
}

test('embedder embeds written content and retrieval text with the exact OpenAI-compatible request', async (t) => {
  const receiver = await embeddingsReceiver(t);
  const h = await startHarness(t, {
    SVC_KNOWLEDGE_EMBEDDER_URL: receiver.url,
    SVC_KNOWLEDGE_EMBEDDER_MODEL: 'test-embed-1',
    SVC_KNOWLEDGE_EMBEDDER_DIMENSIONS: '4',
    SVC_KNOWLEDGE_EMBEDDER_API_KEY: 'sk-test-key',
  });
  const cat = await h.write('n', { content: 'the cat sleeps', source_id: 's' });
  await h.write('n', { content: 'a dog barks', source_id: 's' });
  t.deepEqual(receiver.received[0], {
    method: 'POST',
    url: '/v1/embeddings',
    headers: receiver.received[0]!.headers,
    body: { model: 'test-embed-1', input: ['the cat sleeps'], dimensions: 4 },
  });
  t.is(receiver.received[0]!.headers.authorization, 'Bearer sk-test-key');
  t.is(receiver.received[0]!.headers['content-type'], 'application/json');
  const node = await h.call('GET', `/v1/namespaces/n/nodes/${cat.node_id}`);
  t.like(node.body, { has_vector: true, model_id: 'test-embed-1' });
  const results = await h.retrieve('n', { text: 'cat' });
  t.is(results[0].id, cat.node_id);
  t.is(results[0].retrieval_source, 'text+vector');
  t.deepEqual(receiver.received.at(-1)!.body.input, ['cat']);
  // A caller vector is used as given: no embedder call.
  const before = receiver.received.length;
  await h.write('n', { content: 'tree', source_id: 's', vector: [0, 0, 0, 1] });
  t.is(receiver.received.length, before);
});

test('embedder batches concurrent requests up to the batch size', async (t) => {
  const receiver = await embeddingsReceiver(t);
  const embedder = new HttpEmbedder({ url: receiver.url, model: 'm', batchSize: 3 });
  const vectors = await Promise.all([embedder.embed(['cat', 'dog']), embedder.embed(['car', 'tree', 'cat dog'])]);
  t.is(receiver.received.length, 2);
  t.deepEqual(
    receiver.received.map((r) => r.body.input),
    [
      ['cat', 'dog', 'car'],
      ['tree', 'cat dog'],
    ],
  );
  t.deepEqual(receiver.received[0]!.body, { model: 'm', input: ['cat', 'dog', 'car'] });
  t.is(vectors[0][1]![1], 1);
  t.is(vectors[1][1]![3], 1);
});

test('embedder times out and the write answers 504 without leaving a pending intent', async (t) => {
  const receiver = await embeddingsReceiver(t, { hang: true });
  const h = await startHarness(t, {
    SVC_KNOWLEDGE_EMBEDDER_URL: receiver.url,
    SVC_KNOWLEDGE_EMBEDDER_TIMEOUT: '200ms',
  });
  const res = await h.call('POST', '/v1/namespaces/n/write', { content: 'slow', source_id: 's' });
  t.is(res.status, 504);
  t.is(res.body.error.code, 'embedder_timeout');
  t.is((await h.call('GET', '/v1/namespaces/n/recovery/pending')).body.total, 0);
});

test('embedder answers with the wrong dimension count are refused', async (t) => {
  const receiver = await embeddingsReceiver(t, { dims: 3 });
  const embedder = new HttpEmbedder({ url: receiver.url, model: 'm', dimensions: 4 });
  await t.throwsAsync(embedder.embed(['x']), { message: /answered 3 dimensions, 4 were configured/ });
});
