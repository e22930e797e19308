/**
 * The HTTP clients of benchmark (a), run in a child process (docs/adr/0203) so the server's thread
 * serves and the clients' CPU is counted apart from it. Started by `write-throughput.ts` with
 * `fork`; one command at a time over IPC:
 *
 * - `prepare`: keep the bodies of the next `drive` (sent before the clock starts: the copy over IPC
 *   costs the bench's thread, which is the server's);
 * - `drive`: send the prepared bodies with N concurrent clients (an undici `Pool` of N connections);
 *   answers the wall time and this process's CPU;
 * - `load`: N clients write fresh bodies built from the prepared bodies until `stop` (the retrieve
 *   probe's load);
 * - `probe`: time the prepared retrieve bodies one after another; answers the latencies.
 * `load` and `probe` use prepared bodies too, so that no IPC copy of megabytes holds the server's
 * loop while the probe's loop-delay figure is taken (docs/adr/0205).
 */
import { Pool } from 'undici';

/** A command from the bench. */
export type ClientCommand =
  | { kind: 'prepare'; bodies: string[] }
  | { kind: 'drive'; origin: string; path: string; clients: number; perBody: number }
  | { kind: 'load'; origin: string; path: string; clients: number }
  | { kind: 'probe'; origin: string; path: string }
  | { kind: 'stop' };

/** The answer to a command. */
export type ClientAnswer =
  | { kind: 'prepared' }
  | { kind: 'driven'; seconds: number; cpuMicros: number }
  | { kind: 'loaded'; writes: number; cpuMicros: number }
  | { kind: 'probed'; ms: number[] }
  | { kind: 'failed'; message: string };

const pools = new Map<string, Pool>();
function poolOf(origin: string, connections: number): Pool {
  const key = `${origin} ${connections}`;
  let pool = pools.get(key);
  if (!pool) {
    pool = new Pool(origin, { connections, pipelining: 1, keepAliveTimeout: 60_000 });
    pools.set(key, pool);
  }
  return pool;
}

async function post(pool: Pool, path: string, body: string): Promise<any> {
  const res = await pool.request({
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
    body,
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${path} answered ${res.statusCode}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

function cpu(): number {
  const c = process.cpuUsage();
  return c.user + c.system;
}

let loading = false;
let prepared: string[] = [];

async function run(command: ClientCommand): Promise<ClientAnswer | undefined> {
  switch (command.kind) {
    case 'prepare':
      prepared = command.bodies;
      return { kind: 'prepared' };
    case 'drive': {
      const bodies = prepared;
      const pool = poolOf(command.origin, command.clients);
      let cursor = 0;
      const cpu0 = cpu();
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: command.clients }, async () => {
          while (cursor < bodies.length) {
            const res = await post(pool, command.path, bodies[cursor++]!);
            if (command.perBody > 1 && res.results.some((r: { status: number }) => r.status !== 200))
              throw new Error('a batch item failed');
          }
        }),
      );
      return { kind: 'driven', seconds: (performance.now() - t0) / 1000, cpuMicros: cpu() - cpu0 };
    }
    case 'load': {
      const pool = poolOf(command.origin, command.clients);
      const templates = prepared.map((t) => JSON.parse(t) as { content: string });
      loading = true;
      let writes = 0;
      const cpu0 = cpu();
      await Promise.all(
        Array.from({ length: command.clients }, async (_, c) => {
          for (let i = 0; loading; i++) {
            const t = templates[(c * 7919 + i) % templates.length]!;
            // A fresh content each time, so no write is a duplicate of an earlier one.
            await post(pool, command.path, JSON.stringify({ ...t, content: `${t.content} load${c}x${i}` }));
            writes++;
          }
        }),
      );
      return { kind: 'loaded', writes, cpuMicros: cpu() - cpu0 };
    }
    case 'probe': {
      const pool = poolOf(command.origin, 1);
      const ms: number[] = [];
      for (const body of prepared) {
        const s = performance.now();
        await post(pool, command.path, body);
        ms.push(performance.now() - s);
      }
      return { kind: 'probed', ms };
    }
    case 'stop':
      loading = false;
      return undefined;
  }
}

process.on('message', (command: ClientCommand) => {
  run(command).then(
    (answer) => {
      if (answer) process.send!(answer);
    },
    (error: unknown) => process.send!({ kind: 'failed', message: String((error as Error)?.stack ?? error) }),
  );
});
process.on('disconnect', () => {
  for (const pool of pools.values()) void pool.destroy();
  process.exit(0);
});
