/**
 * The routing service: the routing controller (tunnel config), the wake gateway, the idle scaler,
 * access observations and the edge analytics sync, fed by the app and spec controllers.
 * `wiring/control/routing.ts` builds it from the configuration; the API and the deploy pipeline
 * see it as `Routing`.
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
import type { Registry } from '../../domain/registry/index.js';
import type { SchedulerTargets } from '../apps/scheduler-targets.js';
import { Controller } from '../runtime/controller.js';
import { AccessObservations } from './access-observations.js';
import { EdgeSync } from './edge-sync.js';
import type { GatewayScale } from './gateway-scale.js';
import { IdleScaler } from './idle-scaler.js';
import { createRoutingReconciler, TUNNEL_KEY, type RoutingState, type TunnelSettings } from './routing-reconciler.js';
import { routingSignature, type EndpointToggleResult, type RouteAppResult, type Routing } from './routing.js';
import { WakeGateway } from './wake-gateway.js';
import { wakeTargets, type WakeTargetView } from './wake-targets.js';

export interface RoutingServiceOptions {
  readonly db: Db;
  readonly registry: Registry;
  readonly targets: SchedulerTargets;
  /** The app controller: an app reconcile that changed what routing reads enqueues the tunnel. */
  readonly appController: Controller;
  /** The spec controller: any spec reconcile invalidates the gateway's host map. */
  readonly specController: Controller;
  readonly scale: GatewayScale;
  readonly logger: Logger;
  readonly tunnel: TunnelSettings;
  /** Idle period before scale to zero; 0 disables. */
  readonly idleMs: number;
  /** True when the autoscaler runs (it scales autoscaled processes to zero itself). @default false */
  readonly autoscaling?: boolean;
  readonly edge: {
    readonly api: EdgeAnalyticsOptions | undefined;
    readonly lookbackMs: number;
    readonly lookbackMaxMs: number;
    readonly intervalMs: number;
  };
  /** Full resync of the tunnel config (corrects drift even without a file event). @default 30000 */
  readonly resyncMs?: number;
}

interface Waiter {
  readonly generation: number;
  readonly resolve: () => void;
  readonly reject: (e: unknown) => void;
}

/** The running routing services; `start()` before use, `close()` to stop. */
export class RoutingService implements Routing {
  readonly controller: Controller;
  readonly gateway: WakeGateway;
  readonly idle: IdleScaler;
  readonly access: AccessObservations;
  readonly edgeSync: EdgeSync;
  readonly #options: RoutingServiceOptions;
  readonly #reconciler: ReturnType<typeof createRoutingReconciler>;
  readonly #log: Logger;
  readonly #waiters = new Set<Waiter>();
  readonly #unsubscribes: (() => void)[] = [];
  #gatewayUrl: string | undefined;
  #watcher: fs.FSWatcher | undefined;

  constructor(options: RoutingServiceOptions) {
    this.#options = options;
    const log = options.logger.child({ controller: 'routing' });
    this.#log = log;
    this.gateway = new WakeGateway({
      db: options.db,
      registry: options.registry,
      targets: options.targets,
      scale: options.scale,
      logger: log.child({ component: 'wake-gateway' }),
    });
    this.#reconciler = createRoutingReconciler({
      db: options.db,
      tunnel: options.tunnel,
      logger: log,
      gatewayUrl: () => this.#gatewayUrl,
      onRules: (_rules, apps, toggles) => this.gateway.refreshHosts(apps, toggles),
    });
    this.controller = new Controller(this.#reconciler, log, { workers: 1, resyncMs: options.resyncMs ?? 30_000 });
    const hostnames = () => this.gateway.targets().map((t) => t.hostname);
    this.access = new AccessObservations({
      db: options.db,
      logger: log.child({ component: 'access' }),
      mappedHostnames: hostnames,
    });
    const edge = options.edge;
    this.edgeSync = new EdgeSync({
      db: options.db,
      logger: log.child({ component: 'edge-sync' }),
      api: edge.api,
      lookbackMs: edge.lookbackMs,
      lookbackMaxMs: edge.lookbackMaxMs,
      intervalMs: edge.intervalMs,
      hostnames,
    });
    this.idle = new IdleScaler({
      gateway: this.gateway,
      targets: options.targets,
      scale: options.scale,
      logger: log.child({ component: 'idle-scaler' }),
      idleMs: options.idleMs,
      autoscalerOwnsAutoscaled: options.autoscaling ?? false,
    });
  }

  /** Subscribes to the app and spec controllers, watches the tunnel file and starts every part. */
  async start(): Promise<void> {
    const options = this.#options;
    this.#unsubscribes.push(this.controller.onReconciled((_key, error) => this.#settleWaiters(error)));
    // An app reconcile matters to routing only when what routing reads of the app changed.
    const seen = new Map<string, string>();
    this.#unsubscribes.push(
      options.appController.onReconciled((key) => {
        const signature = routingSignature(getApp(options.db, key));
        if (seen.get(key) === signature) return;
        seen.set(key, signature);
        this.controller.enqueue(TUNNEL_KEY);
      }),
    );
    this.#unsubscribes.push(options.specController.onReconciled(() => this.gateway.invalidateHosts()));
    this.#watchTunnelFolder();
    await this.controller.start();
    this.access.start();
    this.idle.start();
    this.edgeSync.start();
  }

  setGatewayUrl(url: string): void {
    this.#gatewayUrl = url;
    this.controller.enqueue(TUNNEL_KEY);
  }

  async routeApp(app: string): Promise<RouteAppResult> {
    const done = new Promise<void>((resolve, reject) =>
      this.#waiters.add({ generation: this.#reconciler.state().generation + 1, resolve, reject }),
    );
    this.controller.enqueue(TUNNEL_KEY);
    await done;
    const state = this.#reconciler.state();
    return { app, rules: state.rules.filter((r) => r.app === app), changedAt: state.lastChangedAt, file: state.file };
  }

  async toggle(appName: string, hostname: string, enabled: boolean): Promise<EndpointToggleResult> {
    const app = getApp(this.#options.db, appName);
    const spec = app?.spec;
    if (!app || !spec || app.deletedAt !== null)
      throw new NotFoundError(`app "${appName}" is not discovered under the apps folder`, {
        code: 'app_not_found',
        details: { app: appName },
      });
    const normalized = toggleHostname(spec, hostname);
    const outcome = setEndpointToggle(this.#options.db, appName, normalized, enabled);
    this.gateway.refreshHosts();
    const result = await this.routeApp(appName);
    return {
      app: appName,
      hostname: normalized,
      enabled,
      outcome,
      routed: result.rules.some((r) => r.hostname === normalized),
    };
  }

  state(): RoutingState {
    return this.#reconciler.state();
  }

  toggles(): ReturnType<Routing['toggles']> {
    return listEndpointToggles(this.#options.db);
  }

  wakeTargets(controlUrl: string): Promise<{ targets: WakeTargetView[] }> {
    const options = this.#options;
    return wakeTargets(
      {
        db: options.db,
        registry: options.registry,
        targets: options.targets,
        address: { networking: options.tunnel.networking, nodeIp: options.tunnel.nodeIp },
        routedHostnames: () =>
          new Set(
            this.#reconciler
              .state()
              .config?.ingress.map((r) => r.hostname)
              .filter((h): h is string => h !== undefined) ?? [],
          ),
      },
      controlUrl,
    );
  }

  async close(): Promise<void> {
    this.#watcher?.close();
    for (const unsubscribe of this.#unsubscribes) unsubscribe();
    this.idle.stop();
    await this.edgeSync.stop();
    this.gateway.close();
    await this.controller.stop();
    this.access.stop();
    for (const waiter of this.#waiters) waiter.reject(new Error('routing stopped'));
    this.#waiters.clear();
  }

  /** Resolves (or rejects) every waiter whose generation the reconciled state has reached. */
  #settleWaiters(error: unknown): void {
    const generation = this.#reconciler.state().generation;
    for (const waiter of [...this.#waiters]) {
      if (generation < waiter.generation) continue;
      this.#waiters.delete(waiter);
      if (error === undefined) waiter.resolve();
      else waiter.reject(error);
    }
  }

  /** Hand edits to the tunnel file are corrected promptly: any change in its folder enqueues a reconcile. */
  #watchTunnelFolder(): void {
    const file = this.#options.tunnel.file;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    try {
      this.#watcher = fs.watch(path.dirname(file), (_event, name) => {
        if (name === null || name === path.basename(file)) this.controller.enqueue(TUNNEL_KEY);
      });
      this.#watcher.on('error', () => undefined);
    } catch (err) {
      this.#log.warn({ err }, 'cannot watch the tunnel config folder; drift is corrected on the periodic resync');
    }
  }
}
