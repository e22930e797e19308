/**
 * Starts the real services on ephemeral ports for a test and stops them afterwards.
 */
import type { ExecutionContext } from 'ava';
import type Koa from 'koa';
import type { ControlPlane } from '../../wiring/control-plane.js';
import type { KnowledgeStore } from '../../wiring/knowledge-store.js';
import { listen, type RunningServer } from '../../api/http/listen.js';
import { silentLogger } from '../../platform/logger.js';
import type { SvcConfig } from '../../platform/config.js';
import { testConfig } from './test-config.js';
import { closePlaneAndStopApps } from './stop-apps.js';

/** Starts a control plane with a test config (or `config`), stopped in teardown. */
export async function startTestControlPlane(
  t: ExecutionContext,
  config: SvcConfig = testConfig(t),
): Promise<ControlPlane> {
  // Imported when first started: most files that import this helper only send requests, and the
  // control plane and knowledge store are about 1,300 module files (ADR 0170).
  const { startControlPlane } = await import('../../wiring/control-plane.js');
  const plane = await startControlPlane(config, silentLogger());
  t.teardown(() => closePlaneAndStopApps(plane, config));
  return plane;
}

/** Starts a knowledge store with a test config (or `config`), stopped in teardown. */
export async function startTestKnowledgeStore(
  t: ExecutionContext,
  config: SvcConfig = testConfig(t),
): Promise<KnowledgeStore> {
  const { startKnowledgeStore } = await import('../../wiring/knowledge-store.js');
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

export { request } from './http-request.js';
