/**
 * Test harness for the knowledge store: a real server on ephemeral ports and a small REST client.
 */
import type { ExecutionContext } from 'ava';
import type { KnowledgeStore, KnowledgeStoreExtras } from '../../wiring/knowledge-store.js';
import { silentLogger } from '../../platform/logger.js';
import { testConfig } from '../helpers/test-config.js';

export { request } from '../helpers/http-request.js';
import { request } from '../helpers/http-request.js';

/** A started store plus helpers bound to it. */
export interface Harness {
  readonly store: KnowledgeStore;
  /** Calls the REST listener; `path` is absolute (e.g. `/v1/namespaces/n/write`). */
  call(
    method: string,
    path: string,
    json?: unknown,
    token?: string,
  ): Promise<{ status: number; body: any; headers: Headers; text: string }>;
  /** Calls the admin listener. */
  admin(
    method: string,
    path: string,
    json?: unknown,
    token?: string,
  ): Promise<{ status: number; body: any; headers: Headers; text: string }>;
  /** `POST /v1/namespaces/{ns}/write`, asserting a 200. */
  write(ns: string, body: Record<string, unknown>, token?: string): Promise<any>;
  /** `POST /v1/namespaces/{ns}/retrieve`, asserting a 200, returning results. */
  retrieve(ns: string, body: Record<string, unknown>, token?: string): Promise<any[]>;
}

/** Starts a knowledge store for one test with extra `SVC_*` variables. */
export async function startHarness(
  t: ExecutionContext,
  env: Record<string, string> = {},
  extras: KnowledgeStoreExtras = {},
): Promise<Harness> {
  // Imported when a store starts: some files take only `request` from here (ADR 0170).
  const { startKnowledgeStore } = await import('../../wiring/knowledge-store.js');
  const store = await startKnowledgeStore(testConfig(t, env), silentLogger(), extras);
  t.teardown(() => store.close());
  const send = (base: string) => (method: string, path: string, json?: unknown, token?: string) =>
    request(base + path, {
      method,
      ...(json === undefined ? {} : { json }),
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
  const call = send(store.url);
  return {
    store,
    call,
    admin: send(store.adminUrl),
    async write(ns, body, token) {
      const res = await call('POST', `/v1/namespaces/${ns}/write`, body, token);
      if (res.status !== 200) throw new Error(`write failed ${res.status}: ${res.text}`);
      return res.body;
    },
    async retrieve(ns, body, token) {
      const res = await call('POST', `/v1/namespaces/${ns}/retrieve`, body, token);
      if (res.status !== 200) throw new Error(`retrieve failed ${res.status}: ${res.text}`);
      return res.body.results as any[];
    },
  };
}

/** A deterministic unit-ish vector pointing mostly along axis `axis`, slightly along `tilt`. */
export function axisVector(dims: number, axis: number, tilt = 0, tiltAxis = (axis + 1) % dims): number[] {
  const v = new Array<number>(dims).fill(0);
  v[axis] = 1;
  v[tiltAxis] = (v[tiltAxis] ?? 0) + tilt;
  return v;
}
