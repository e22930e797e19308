/**
 * Helpers of the feedback and review tests: a store with an injected clock, GraphQL calls and a
 * local HTTP receiver that records what it is sent.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ExecutionContext } from 'ava';
import { startHarness, type Harness } from './knowledge-harness.js';

/** A clock tests move by hand. */
export interface TestClock {
  now: number;
  advanceHours(hours: number): void;
}

/** Starts a store whose wall clock is `clock` (default 2026-01-01T00:00:00Z). */
export async function startReviewHarness(
  t: ExecutionContext,
  env: Record<string, string> = {},
): Promise<Harness & { clock: TestClock }> {
  const clock: TestClock = {
    now: Date.parse('2026-01-01T00:00:00Z'),
    advanceHours(hours) {
      this.now += hours * 3_600_000;
    },
  };
  const h = await startHarness(t, env, { now: () => clock.now });
  return Object.assign(h, { clock });
}

/** POST /graphql. */
export function gql(h: Harness, query: string, variables?: Record<string, unknown>, token?: string) {
  return h.call('POST', '/graphql', { query, ...(variables ? { variables } : {}) }, token);
}

/** A request the receiver got. */
export interface Received {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** A local HTTP receiver answering with `respond` (status and body) per request. */
export async function startReceiver(
  t: ExecutionContext,
  respond: (
    r: Received,
    n: number,
  ) =>
    | { status: number; body?: string; headers?: Record<string, string> }
    | Promise<{ status: number; body?: string; headers?: Record<string, string> }>,
) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(r);
      void Promise.resolve(respond(r, received.length)).then((out) => {
        res.writeHead(out.status, { 'content-type': 'application/json', ...out.headers });
        res.end(out.body ?? '');
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received };
}

/** Writes a node and returns its id. */
export async function node(h: Harness, ns: string, body: Record<string, unknown>): Promise<string> {
  return (await h.write(ns, body)).node_id as string;
}
