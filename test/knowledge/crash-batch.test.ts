// tier: full
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import test, { type ExecutionContext } from 'ava';
import { request } from './knowledge-harness.js';
import { tempDir } from '../helpers/temp-dir.js';
import { programArgs } from '../helpers/cli.js';
import { sourceDir } from '../helpers/repo.js';

const here = sourceDir(import.meta.dirname);
const SINGLE_CLIENTS = 8;
const BATCH_CLIENTS = 2;
const BATCH_SIZE = 100;

async function startChild(t: ExecutionContext, dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [...programArgs(path.join(here, 'crash-server.ts'))], {
    env: { ...process.env, SVC_DATA_DIR: dataDir },
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

const contentOf = (id: string) => `group record ${id}`;

test('crash: kill -9 under concurrent single and batch writes (group commit) loses no acknowledged write', async (t) => {
  const dataDir = path.join(tempDir(t), 'data');
  const first = await startChild(t, dataDir);
  const killAfter = 500 + Math.floor(Math.random() * 1000);
  const acked = new Map<string, string>();
  let next = 0;
  let killed = false;
  let batchesAcked = 0;
  const exited = new Promise<void>((resolve) => first.child.once('exit', () => resolve()));
  const maybeKill = () => {
    if (!killed && acked.size >= killAfter) {
      killed = true;
      first.child.kill('SIGKILL');
    }
  };

  const single = async () => {
    while (!killed) {
      const id = `s-${next++}`;
      try {
        const res = await request(`${first.url}/v1/namespaces/crash/write`, {
          method: 'POST',
          json: { content: contentOf(id), source_id: 'crash', request_id: id },
        });
        if (res.status === 200 && res.body.admitted === true) acked.set(id, res.body.node_id);
      } catch {
        // connection cut by the kill: not acknowledged
      }
      maybeKill();
    }
  };
  const batch = async () => {
    while (!killed) {
      const ids = Array.from({ length: BATCH_SIZE }, () => `b-${next++}`);
      try {
        const res = await request(`${first.url}/v1/namespaces/crash/write/batch`, {
          method: 'POST',
          json: { writes: ids.map((id) => ({ content: contentOf(id), source_id: 'crash', request_id: id })) },
        });
        if (res.status === 200) {
          batchesAcked++;
          res.body.results.forEach((r: any, i: number) => {
            if (r.status === 200 && r.admitted === true) acked.set(ids[i]!, r.node_id);
          });
        }
      } catch {
        // connection cut by the kill: no item of this batch is acknowledged
      }
      maybeKill();
    }
  };
  await Promise.all([
    ...Array.from({ length: SINGLE_CLIENTS }, single),
    ...Array.from({ length: BATCH_CLIENTS }, batch),
  ]);
  await exited;
  t.true(killed);
  t.true(batchesAcked > 0, 'batches were acknowledged before the kill');
  t.true(
    [...acked.keys()].some((id) => id.startsWith('s-')),
    'single writes were acknowledged before the kill',
  );

  const second = await startChild(t, dataDir);
  // Resubmitting every acknowledged write with its request_id must find it, under the same node id.
  const ids = [...acked.keys()];
  let found = 0;
  for (let i = 0; i < ids.length; i += 1000) {
    const chunk = ids.slice(i, i + 1000);
    const res = await request(`${second.url}/v1/namespaces/crash/write/batch`, {
      method: 'POST',
      json: { writes: chunk.map((id) => ({ content: contentOf(id), source_id: 'crash', request_id: id })) },
    });
    t.is(res.status, 200);
    res.body.results.forEach((r: any, k: number) => {
      if (r.replayed === true && r.node_id === acked.get(chunk[k]!)) found++;
    });
  }
  t.is(found, acked.size, 'every acknowledged write survived the kill');
  // And their content is intact (a sample, read back node by node).
  for (const id of ids.filter((_, i) => i % 25 === 0)) {
    const node = await request(`${second.url}/v1/namespaces/crash/nodes/${acked.get(id)}`);
    t.is(node.body.content, contentOf(id));
  }
  const pending = await request(`${second.url}/v1/namespaces/crash/recovery/pending`);
  t.is(pending.body.total, 0, 'a write with no awaited step leaves no intent behind');
  console.log(`crash-batch test: ${JSON.stringify({ sent: next, acknowledged: acked.size, batchesAcked })}`);
  second.child.kill('SIGTERM');
});
