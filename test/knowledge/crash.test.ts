// tier: full
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import test, { type ExecutionContext } from 'ava';
import { request } from './knowledge-harness.js';
import { tempDir } from '../helpers/temp-dir.js';
import { programArgs } from '../helpers/cli.js';
import { sourceDir } from '../helpers/repo.js';

const here = sourceDir(import.meta.dirname);
const TOTAL = 10_000;
const CONCURRENCY = 16;

/** Local OpenAI-compatible embeddings endpoint: the embedder call widens the window between intent and apply. */
async function embeddings(t: ExecutionContext): Promise<string> {
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw) as { input: string[] };
      const data = body.input.map((text, index) => ({
        index,
        embedding: Array.from({ length: 8 }, (_, i) => ((text.charCodeAt(i % text.length) * (i + 1)) % 17) - 8 + 0.5),
      }));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data }));
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
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function startChild(
  t: ExecutionContext,
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [...programArgs(path.join(here, 'crash-server.ts'))], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const lines = readline.createInterface({ input: child.stdout });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`server exited early with ${code}`)));
    lines.once('line', (line) => resolve((JSON.parse(line) as { url: string }).url));
  });
  return { child, url };
}

test('crash: kill -9 during 10,000 writes loses no acknowledged write and lists interrupted ones as pending', async (t) => {
  const dataDir = path.join(tempDir(t), 'data');
  const env = { SVC_DATA_DIR: dataDir, SVC_KNOWLEDGE_EMBEDDER_URL: await embeddings(t) };
  const first = await startChild(t, env);
  const killAfter = 1000 + Math.floor(Math.random() * 4000);
  const acked = new Map<string, string>();
  const inflight = new Set<string>();
  let next = 0;
  let killed = false;
  const exited = new Promise<void>((resolve) => first.child.once('exit', () => resolve()));

  const worker = async () => {
    while (!killed && next < TOTAL) {
      const i = next++;
      const id = `w-${i}`;
      inflight.add(id);
      try {
        const res = await request(`${first.url}/v1/namespaces/crash/write`, {
          method: 'POST',
          json: { content: `crash record ${i}`, source_id: 'crash', request_id: id },
        });
        if (res.status === 200 && res.body.admitted === true) {
          acked.set(id, res.body.node_id);
          inflight.delete(id);
        }
      } catch {
        // connection cut by the kill: the write stays in flight
      }
      if (!killed && acked.size >= killAfter) {
        killed = true;
        first.child.kill('SIGKILL');
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  await exited;
  t.true(killed, 'the server was killed before all writes finished');

  const second = await startChild(t, env);
  // Every acknowledged write is readable.
  let readable = 0;
  for (const [id, nodeId] of acked) {
    const res = await request(`${second.url}/v1/namespaces/crash/nodes/${nodeId}`);
    if (res.status === 200 && res.body.content === `crash record ${id.slice(2)}`) readable++;
  }
  t.is(readable, acked.size);

  const pending = await request(`${second.url}/v1/namespaces/crash/recovery/pending?limit=10000`);
  const pendingIds = new Set<string>(pending.body.pending.map((p: any) => p.request_id));
  t.is(pending.body.total, pendingIds.size);
  for (const id of pendingIds) t.true(inflight.has(id), `${id} is pending but was not in flight`);

  // In-flight writes not pending either committed before the kill (a retry with the same request_id
  // reports it as replayed) or never reached durable state (their intent was not yet recorded).
  let committedUnacked = 0;
  let notStarted = 0;
  for (const id of inflight) {
    if (pendingIds.has(id)) continue;
    const retry = await request(`${second.url}/v1/namespaces/crash/write`, {
      method: 'POST',
      json: { content: `crash record ${id.slice(2)}`, source_id: 'crash', request_id: id },
    });
    if (retry.body.replayed === true) committedUnacked++;
    else notStarted++;
  }
  const reconcile = await request(`${second.url}/v1/namespaces/crash/recovery/reconcile`, {
    method: 'POST',
    json: { execute: true },
  });
  t.false(reconcile.body.stopped);
  t.is(reconcile.body.remaining, 0);
  t.true(reconcile.body.steps.every((s: any) => s.action === 'replayed'));
  const summary = {
    sent: next,
    acknowledged: acked.size,
    readable_after_restart: readable,
    in_flight_at_kill: inflight.size,
    pending_listed: pendingIds.size,
    committed_unacknowledged: committedUnacked,
    not_started: notStarted,
    replayed: reconcile.body.steps.length,
  };
  t.log(JSON.stringify(summary));
  console.log(`crash test: ${JSON.stringify(summary)}`);
  second.child.kill('SIGTERM');
});
