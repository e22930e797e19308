/**
 * Starts routing: the routing controller (tunnel config), the wake gateway service, the idle
 * scaler, access observations and the edge analytics sync, fed by the app controller.
 */
import fs from 'node:fs';
import path from 'node:path';
import { toggleHostname } from '../../domain/routing/index.js';
import { NotFoundError } from '../../domain/errors.js';
import type { EdgeAnalyticsOptions } from '../../platform/edge/index.js';
import type { Logger } from '../../platform/logger.js';
import type { Db } from '../../store/database.js';
import { getApp } from '../../store/control/apps.js';
import { listEndpointToggles, setEndpointToggle } from '../../store/control/routing-toggles.js';
import type { Reconcilers } from './reconcilers.js';
import { Controller } from '../../controllers/runtime/controller.js';
import { AccessObservations } from '../../controllers/routing/access-observations.js';
import { EdgeSync } from '../../controllers/routing/edge-sync.js';
import type { GatewayScale } from '../../controllers/routing/gateway-scale.js';
import { IdleScaler } from '../../controllers/routing/idle-scaler.js';
import { createRoutingReconciler, TUNNEL_KEY, type TunnelSettings } from '../../controllers/routing/routing-reconciler.js';
import { WakeGateway } from '../../controllers/routing/wake-gateway.js';
import { wakeTargets } from '../../controllers/routing/wake-targets.js';
import { routingSignature, type RouteAppResult, type Routing } from '../../controllers/routing/routing.js';

export type { Routing };

export interface RoutingOptions {
  readonly db: Db;
  readonly reconcilers: Reconcilers;
  readonly scale: GatewayScale;
  readonly logger: Logger;
  readonly tunnel: TunnelSettings;
  /** Idle period before scale to zero; 0 disables. */
  readonly idleMs: number;
  readonly edge: {
    readonly api: EdgeAnalyticsOptions | undefined;
    readonly lookbackMs: number;
    readonly lookbackMaxMs: number;
    readonly intervalMs: number;
  };
  /** Full resync of the tunnel config (corrects drift even without a file event). @default 30000 */
  readonly resyncMs?: number;
}

/** Starts the routing controller and its companions. */
export async function startRouting(options: RoutingOptions): Promise<Routing> {
  const log = options.logger.child({ controller: 'routing' });
  let gatewayUrl: string | undefined;
  const gateway = new WakeGateway({ db: options.db, registry: options.reconcilers.registry, targets: options.reconcilers.targets, scale: options.scale, logger: log.child({ component: 'wake-gateway' }) });
  const reconciler = createRoutingReconciler({
    db: options.db,
    tunnel: options.tunnel,
    logger: log,
    gatewayUrl: () => gatewayUrl,
    onRules: (_rules, apps, toggles) => gateway.refreshHosts(apps, toggles),
  });
  const controller = new Controller(reconciler, log, { workers: 1, resyncMs: options.resyncMs ?? 30_000 });
  const waiters = new Set<{ generation: number; resolve: () => void; reject: (e: unknown) => void }>();
  const unsubscribes: (() => void)[] = [];
  unsubscribes.push(controller.onReconciled((_key, error) => {
    const generation = reconciler.state().generation;
    for (const waiter of [...waiters]) {
      if (generation < waiter.generation) continue;
      waiters.delete(waiter);
      if (error === undefined) waiter.resolve();
      else waiter.reject(error);
    }
  }));
  // An app reconcile matters to routing only when what routing reads of the app changed.
  const seen = new Map<string, string>();
  unsubscribes.push(options.reconcilers.appController.onReconciled((key) => {
    const signature = routingSignature(getApp(options.db, key));
    if (seen.get(key) === signature) return;
    seen.set(key, signature);
    controller.enqueue(TUNNEL_KEY);
  }));
  unsubscribes.push(options.reconcilers.specController.onReconciled(() => gateway.invalidateHosts()));
  const access = new AccessObservations({ db: options.db, logger: log.child({ component: 'access' }), mappedHostnames: () => gateway.targets().map((t) => t.hostname) });
  const edgeSync = new EdgeSync({ db: options.db, logger: log.child({ component: 'edge-sync' }), api: options.edge.api, lookbackMs: options.edge.lookbackMs, lookbackMaxMs: options.edge.lookbackMaxMs, intervalMs: options.edge.intervalMs, hostnames: () => gateway.targets().map((t) => t.hostname) });
  const idle = new IdleScaler({ gateway, targets: options.reconcilers.targets, scale: options.scale, logger: log.child({ component: 'idle-scaler' }), idleMs: options.idleMs });
  // Hand edits to the file are corrected promptly: any change in its folder enqueues a reconcile.
  fs.mkdirSync(path.dirname(options.tunnel.file), { recursive: true });
  let watcher: fs.FSWatcher | undefined;
  try {
    watcher = fs.watch(path.dirname(options.tunnel.file), (_event, name) => {
      if (name === null || name === path.basename(options.tunnel.file)) controller.enqueue(TUNNEL_KEY);
    });
    watcher.on('error', () => undefined);
  } catch (err) {
    log.warn({ err }, 'cannot watch the tunnel config folder; drift is corrected on the periodic resync');
  }
  await controller.start();
  access.start();
  idle.start();
  edgeSync.start();

  const routeApp = async (app: string): Promise<RouteAppResult> => {
    const done = new Promise<void>((resolve, reject) => waiters.add({ generation: reconciler.state().generation + 1, resolve, reject }));
    controller.enqueue(TUNNEL_KEY);
    await done;
    const state = reconciler.state();
    return { app, rules: state.rules.filter((r) => r.app === app), changedAt: state.lastChangedAt, file: state.file };
  };

  return {
    controller,
    gateway,
    idle,
    access,
    edgeSync,
    setGatewayUrl(url) {
      gatewayUrl = url;
      controller.enqueue(TUNNEL_KEY);
    },
    routeApp,
    async toggle(appName, hostname, enabled) {
      const app = getApp(options.db, appName);
      const spec = app?.spec;
      if (!app || !spec || app.deletedAt !== null) throw new NotFoundError(`app "${appName}" is not discovered under the apps folder`, { code: 'app_not_found', details: { app: appName } });
      const normalized = toggleHostname(spec, hostname);
      const outcome = setEndpointToggle(options.db, appName, normalized, enabled);
      gateway.refreshHosts();
      const result = await routeApp(appName);
      return { app: appName, hostname: normalized, enabled, outcome, routed: result.rules.some((r) => r.hostname === normalized) };
    },
    state: () => reconciler.state(),
    toggles: () => listEndpointToggles(options.db),
    wakeTargets: (controlUrl) =>
      wakeTargets({
        db: options.db,
        registry: options.reconcilers.registry,
        targets: options.reconcilers.targets,
        address: { networking: options.tunnel.networking, nodeIp: options.tunnel.nodeIp },
        routedHostnames: () => new Set(reconciler.state().config?.ingress.map((r) => r.hostname).filter((h): h is string => h !== undefined) ?? []),
      }, controlUrl),
    async close() {
      watcher?.close();
      for (const unsubscribe of unsubscribes) unsubscribe();
      idle.stop();
      edgeSync.stop();
      gateway.close();
      await controller.stop();
      access.stop();
      for (const waiter of waiters) waiter.reject(new Error('routing stopped'));
      waiters.clear();
    },
  };
}
