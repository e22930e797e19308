// tier: full
/**
 * Crash test: kill -9 during a burst of 5,000 events with repeated dedupe keys. After restart no
 * dedupe key is recorded twice within the hour and every acknowledged event is present.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import test, { type ExecutionContext } from 'ava';
import Database from 'better-sqlite3';
import { request } from '../helpers/servers.js';
import { tempDir } from '../helpers/temp-dir.js';
import { programArgs } from '../helpers/cli.js';
import { sourceDir } from '../helpers/repo.js';

const here = sourceDir(import.meta.dirname);
const TOTAL = 5_000;
const CONCURRENCY = 24;

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

// 30 % of the burst repeats a key sent a few requests earlier (often still in flight).
const KEYS: string[] = [];
for (let i = 0, fresh = 0; i < TOTAL; i++) KEYS.push(i >= 10 && i % 10 < 3 ? KEYS[i - 7]! : `burst-${fresh++}`);
const UNIQUE_KEYS = new Set(KEYS).size;
const keyOf = (i: number) => KEYS[i]!;

test('crash: kill -9 during 5,000 events loses no acknowledged event and records no dedupe key twice', async (t) => {
  const dataDir = path.join(tempDir(t), 'data');
  const env = { SVC_DATA_DIR: dataDir, SVC_APPS_DIR: path.join(dataDir, '..', 'apps') };
  const first = await startChild(t, env);
  const killAfter = 1000 + Math.floor(Math.random() * 2000);
  const acked = new Map<string, string>(); // event id -> dedupe key
  let duplicates = 0;
  let next = 0;
  let killed = false;
  const exited = new Promise<void>((resolve) => first.child.once('exit', () => resolve()));
  const worker = async () => {
    while (!killed && next < TOTAL) {
      const i = next++;
      try {
        const res = await request(`${first.url}/api/events`, {
          method: 'POST',
          json: { type: 'event.test', severity: 'warning', title: `burst ${i}`, dedupeKey: keyOf(i) },
        });
        if (res.status === 201) acked.set(res.body.event.id, keyOf(i));
        else if (res.status === 200 && res.body.recorded === false) duplicates++;
      } catch {
        // cut by the kill: never acknowledged
      }
      if (!killed && acked.size + duplicates >= killAfter) {
        killed = true;
        first.child.kill('SIGKILL');
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  await exited;
  t.true(killed);

  const second = await startChild(t, env);
  // Replay the whole burst after restart: every key recorded before the kill must be a duplicate now.
  let replayRecorded = 0;
  let replayDuplicates = 0;
  next = 0;
  const replay = async () => {
    while (next < TOTAL) {
      const i = next++;
      const res = await request(`${second.url}/api/events`, {
        method: 'POST',
        json: { type: 'event.test', severity: 'warning', title: `replay ${i}`, dedupeKey: keyOf(i) },
      });
      if (res.status === 201) replayRecorded++;
      else if (res.status === 200) replayDuplicates++;
      else throw new Error(`replay answered ${res.status}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, replay));
  second.child.kill('SIGKILL');

  const db = new Database(path.join(dataDir, 'control.db'), { readonly: true });
  t.teardown(() => db.close());
  const present = new Set((db.prepare('SELECT id FROM events').all() as { id: string }[]).map((r) => r.id));
  const lost = [...acked.keys()].filter((id) => !present.has(id));
  const twice = db.prepare('SELECT dedupe_key, COUNT(*) AS n FROM events GROUP BY dedupe_key HAVING n > 1').all();
  const ackedKeys = new Set(acked.values());
  t.log(
    `acknowledged before kill: ${acked.size} recorded + ${duplicates} duplicates (killed after ${killAfter} answers); stored after restart: ${present.size}; replay: ${replayRecorded} recorded, ${replayDuplicates} duplicates; lost: ${lost.length}; keys recorded twice: ${twice.length}`,
  );
  t.is(lost.length, 0, 'no acknowledged event lost');
  t.is(twice.length, 0, 'no dedupe key recorded twice within the hour');
  t.is(present.size, UNIQUE_KEYS, 'each key recorded exactly once over both runs');
  t.true(replayRecorded <= UNIQUE_KEYS - ackedKeys.size);
});
