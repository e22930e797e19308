// tier: quick
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import { startHarness } from './knowledge-harness.js';

interface Received {
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: any;
}

/** A local stand-in for a rerank endpoint: scores documents by how many query words they contain, or fails as told. */
async function rerankReceiver(
  t: ExecutionContext,
): Promise<{ url: string; received: Received[]; fail: { status: number | undefined } }> {
  const received: Received[] = [];
  const fail = { status: undefined as number | undefined };
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw);
      received.push({ url: req.url ?? '', headers: req.headers, body });
      if (fail.status !== undefined) {
        res.writeHead(fail.status);
        res.end('down');
        return;
      }
      const words = String(body.query).toLowerCase().split(/\s+/);
      const results = (body.documents as string[])
        .map((document, index) => ({
          index,
          relevance_score: words.filter((w) => document.toLowerCase().includes(w)).length / words.length,
        }))
        .sort((a, b) => b.relevance_score - a.relevance_score);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ model: body.model, results }));
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
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, received, fail };
}

const SIMILARITY_ONLY = { similarity_weight: 1, confidence_weight: 0, recency_weight: 0, utility_weight: 0 };

test('a configured reranker re-scores the fused candidates of a text query with the exact rerank request', async (t) => {
  const receiver = await rerankReceiver(t);
  const h = await startHarness(t, {
    SVC_KNOWLEDGE_RERANKER_URL: receiver.url,
    SVC_KNOWLEDGE_RERANKER_MODEL: 'rerank-test',
    SVC_KNOWLEDGE_RERANKER_API_KEY: 'rk-secret',
  });
  const tides = await h.write('n', { content: 'moon tides and the ocean', source_id: 's' });
  await h.write('n', { content: 'the moon is bright tonight', source_id: 's' });
  await h.write('n', { content: 'ocean currents carry heat', source_id: 's' });

  const answer = await h.call('POST', '/v1/namespaces/n/retrieve', {
    text: 'moon ocean tides',
    score_params: SIMILARITY_ONLY,
  });
  t.is(answer.status, 200, answer.text);
  t.is(answer.body.results[0].id, tides.node_id, 'the document with every query word ranks first');
  t.like(answer.body.rerank, { applied: true, model: 'rerank-test' });
  t.is(receiver.received.length, 1);
  const sent = receiver.received[0]!;
  t.is(sent.url, '/v1/rerank');
  t.is(sent.headers.authorization, 'Bearer rk-secret');
  t.is(sent.body.model, 'rerank-test');
  t.is(sent.body.query, 'moon ocean tides');
  t.is(sent.body.top_n, sent.body.documents.length);
  t.is(answer.body.rerank.candidates, sent.body.documents.length);
  t.false(answer.text.includes('rk-secret'));

  // rerank_k bounds the candidates sent; 0 sends none.
  await h.call('POST', '/v1/namespaces/n/retrieve', { text: 'moon ocean', rerank_k: 1 });
  t.is(receiver.received.at(-1)!.body.documents.length, 1);
  const before = receiver.received.length;
  const none = await h.call('POST', '/v1/namespaces/n/retrieve', { text: 'moon', rerank_k: 0 });
  t.is(none.body.rerank, undefined);
  t.is(receiver.received.length, before);
});

test('a failing reranker leaves the fused order and says why; a query without text is not reranked', async (t) => {
  const receiver = await rerankReceiver(t);
  const h = await startHarness(t, { SVC_KNOWLEDGE_RERANKER_URL: receiver.url });
  await h.write('n', { content: 'alpha beta', source_id: 's', vector: [1, 0] });
  await h.write('n', { content: 'gamma', source_id: 's', vector: [0, 1] });
  receiver.fail.status = 503;
  const degraded = await h.call('POST', '/v1/namespaces/n/retrieve', { text: 'alpha' });
  t.is(degraded.status, 200, degraded.text);
  t.is(degraded.body.results[0].content, 'alpha beta');
  t.like(degraded.body.rerank, { applied: false, code: 'reranker_failed' });
  t.regex(degraded.body.rerank.reason, /HTTP 503/);

  receiver.fail.status = undefined;
  const count = receiver.received.length;
  const vectorOnly = await h.call('POST', '/v1/namespaces/n/retrieve', { vector: [1, 0] });
  t.like(vectorOnly.body.rerank, { applied: false, reason: 'no query text to rerank against' });
  t.is(receiver.received.length, count);
});

test('the reranker settings are validated at start', async (t) => {
  const { loadConfig } = await import('../../platform/config.js');
  t.throws(() => loadConfig({ SVC_KNOWLEDGE_RERANKER_URL: 'ftp://x' }), { message: /SVC_KNOWLEDGE_RERANKER_URL/ });
  t.throws(() => loadConfig({ SVC_KNOWLEDGE_RERANKER_TIMEOUT: 'soon' }), { message: /SVC_KNOWLEDGE_RERANKER_TIMEOUT/ });
  t.is(loadConfig({ SVC_KNOWLEDGE_RERANKER_TIMEOUT: '800ms' }).knowledgeRerankerTimeoutMs, 800);
});
