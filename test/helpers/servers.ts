/**
 * Starts the real services on ephemeral ports for a test and stops them afterwards.
 */
import type { ExecutionContext } from 'ava';
import type Koa from 'koa';
import { startControlPlane, type ControlPlane } from '../../api/control/start-control-plane.js';
import { startKnowledgeStore, type KnowledgeStore } from '../../api/knowledge/start-knowledge-store.js';
import { listen, type RunningServer } from '../../api/http/listen.js';
import { silentLogger } from '../../platform/logger.js';
import type { SvcConfig } from '../../platform/config.js';
import { testConfig } from './test-config.js';
import { closePlaneAndStopApps } from './stop-apps.js';

/** Starts a control plane with a test config (or `config`), stopped in teardown. */
export async function startTestControlPlane(t: ExecutionContext, config: SvcConfig = testConfig(t)): Promise<ControlPlane> {
  const plane = await startControlPlane(config, silentLogger());
  t.teardown(() => closePlaneAndStopApps(plane, config));
  return plane;
}

/** Starts a knowledge store with a test config (or `config`), stopped in teardown. */
export async function startTestKnowledgeStore(t: ExecutionContext, config: SvcConfig = testConfig(t)): Promise<KnowledgeStore> {
  const store = await startKnowledgeStore(config, silentLogger());
  t.teardown(() => store.close());
  return store;
}

/** Serves any Koa app on an ephemeral loopback port, closed in teardown. */
export async function serveApp(t: ExecutionContext, app: Koa): Promise<RunningServer> {
  const server = await listen(app, 0, '127.0.0.1');
  t.teardown(() => server.close(1000));
  return server;
}

/** `fetch` that parses a JSON body (or returns text) and keeps status and headers. */
export async function request(url: string, init: RequestInit & { json?: unknown } = {}): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  const { json, ...rest } = init;
  const response = await fetch(url, {
    ...rest,
    ...(json === undefined ? {} : { body: JSON.stringify(json), headers: { 'content-type': 'application/json', ...(rest.headers as Record<string, string> | undefined) } }),
  });
  const text = await response.text();
  let body: unknown = text;
  if ((response.headers.get('content-type') ?? '').includes('json')) {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  return { status: response.status, headers: response.headers, body, text };
}
