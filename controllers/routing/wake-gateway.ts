/**
 * The wake gateway service: maps a public hostname to the process that serves it, finds a passing
 * registry instance, and when none passes asks for one (scale to 1 through the app controller for
 * gateway-managed processes), then waits for readiness on registry health events. Concurrent
 * requests during one wake share it: one scale-up, every request waits.
 */
import { NotFoundError, TimeoutError, UnavailableError } from '../../domain/errors.js';
import { hostnameMatches, type EndpointToggle } from '../../domain/routing/index.js';
import {
  instanceStatus,
  isRoutable,
  processServiceName,
  type Registry,
  type ServiceInstance,
} from '../../domain/registry/index.js';
import type { Logger } from '../../platform/logger.js';
import type { Db } from '../../store/database.js';
import { listApps, type AppRow } from '../../store/control/apps.js';
import { listEndpointToggles } from '../../store/control/routing-toggles.js';
import { normalizeHostname, publicProcess, isGatewayManaged } from '../../domain/routing/index.js';
import type { SchedulerTargets } from '../apps/scheduler-targets.js';
import type { CanonicalAppSpec } from '../../domain/spec/index.js';
import type { GatewayScale } from './gateway-scale.js';
import { traceMark } from '../../domain/observability/trace-marks.js';
import { ProcessTrafficCounters, type ProcessTraffic } from './process-traffic.js';
import { InstanceBalancer } from './instance-balancer.js';

/** The process behind one public hostname. */
export interface WakeTarget {
  /** The declared endpoint (may be a `*.` pattern). */
  readonly hostname: string;
  readonly app: string;
  readonly process: string;
  /** Registry service `<app>-<process>`. */
  readonly service: string;
  readonly gatewayManaged: boolean;
  /** True when the autoscaler owns the count (`scaling.auto`): the idle scaler leaves it alone. */
  readonly autoscaled: boolean;
  readonly deploy: boolean;
  readonly released: boolean;
  readonly enabled: boolean;
  /** True when every region the process runs in is a standby (`trafficWeight: 0`): no region takes traffic. */
  readonly standby?: boolean;
}

/** How a request was made ready: a passing instance was there, or the process had to be scaled up. */
export type WakeAction = 'ready' | 'scaled';

/** A ready upstream for one request. */
export interface ReadyUpstream {
  readonly instance: ServiceInstance;
  readonly action: WakeAction;
}

export interface WakeGatewayOptions {
  readonly db: Db;
  readonly registry: Registry;
  readonly targets: SchedulerTargets;
  readonly scale: GatewayScale;
  readonly logger: Logger;
}

interface Wake {
  readonly promise: Promise<ServiceInstance>;
  /** True when this wake raised the count from zero. */
  scaled: boolean;
  waiters: number;
  /** Called with the instance when the wake resolves, in the registry's turn (before the promise's reactions). */
  readonly listeners: Set<(instance: ServiceInstance) => void>;
  cancel(): void;
}

/** Counters of the gateway, for tests, the bench and the operator view. */
export interface WakeGatewayStats {
  scaleUps: number;
  wakes: number;
  timeouts: number;
  proxied: number;
}

/** The wake gateway service (the HTTP proxy itself lives at the API edge). */
export class WakeGateway {
  private hosts: WakeTarget[] = [];
  /** Exact hostnames, and `*.` patterns longest first: a Host is resolved without a scan of every app. */
  private exact = new Map<string, WakeTarget>();
  private wildcards: WakeTarget[] = [];
  private stale = true;
  private readonly wakes = new Map<string, Wake>();
  private readonly traffic = new ProcessTrafficCounters();
  private readonly balancer = new InstanceBalancer();
  /** Passing instances per service, sorted by id; dropped on any registry change of that service. */
  private readonly passingCache = new Map<string, ServiceInstance[]>();
  private readonly unwatch: () => void;
  readonly stats: WakeGatewayStats = { scaleUps: 0, wakes: 0, timeouts: 0, proxied: 0 };

  constructor(private readonly options: WakeGatewayOptions) {
    this.unwatch = options.registry.watch((change) => this.passingCache.delete(change.service));
    this.refreshHosts();
  }

  /** Rebuilds the hostname map from the apps' declared endpoints and the toggles (read now, or as a routing reconcile read them). */
  refreshHosts(
    apps: readonly AppRow[] = listApps(this.options.db),
    toggles: readonly EndpointToggle[] = listEndpointToggles(this.options.db),
  ): void {
    const disabled = new Set(toggles.filter((t) => !t.enabled).map((t) => t.hostname));
    const hosts: WakeTarget[] = [];
    for (const app of apps) {
      const spec = app.spec;
      if (!spec || app.deletedAt !== null) continue;
      const process = publicProcess(spec);
      if (process === undefined) continue;
      for (const endpoint of spec.endpoints ?? []) {
        const hostname = normalizeHostname(endpoint.url);
        if (hostname === undefined || hosts.some((h) => h.hostname === hostname)) continue;
        hosts.push({
          hostname,
          app: spec.name,
          process,
          service: processServiceName(spec.name, process),
          gatewayManaged: isGatewayManaged(spec, process),
          autoscaled: spec.processes[process]?.scaling.auto !== undefined,
          deploy: spec.deploy,
          released: app.release !== null,
          enabled: !disabled.has(hostname),
          standby: onlyStandby(spec, process),
        });
      }
    }
    this.stale = false;
    // Exact names before wildcards, longer wildcards first.
    this.hosts = hosts.sort(
      (a, b) =>
        Number(a.hostname.startsWith('*.')) - Number(b.hostname.startsWith('*.')) ||
        b.hostname.length - a.hostname.length,
    );
    this.exact = new Map(hosts.filter((h) => !h.hostname.startsWith('*.')).map((h) => [h.hostname, h]));
    this.wildcards = hosts.filter((h) => h.hostname.startsWith('*.'));
  }

  /** Marks the hostname map stale (a spec changed); it is rebuilt on its next use. */
  invalidateHosts(): void {
    this.stale = true;
  }

  /** The target whose endpoint matches `host` (a normalized hostname), if any. */
  resolve(host: string): WakeTarget | undefined {
    if (this.stale) this.refreshHosts();
    return (
      this.exact.get(host) ??
      (this.wildcards.length === 0 ? undefined : this.wildcards.find((t) => hostnameMatches(t.hostname, host)))
    );
  }

  /** Every mapped target (one per declared public hostname). */
  targets(): readonly WakeTarget[] {
    if (this.stale) this.refreshHosts();
    return this.hosts;
  }

  /**
   * The warm path without a wait: a passing instance when the endpoint is on, the app deployed and
   * the registry's passing instances are already known; undefined when {@link ready} must decide.
   */
  readyNow(target: WakeTarget): ReadyUpstream | undefined {
    if (!target.enabled || !target.deploy || !target.released || target.standby === true) return undefined;
    const passing = this.passingCache.get(target.service);
    if (passing === undefined || passing.length === 0) return undefined;
    return { instance: this.pick(target.service, passing), action: 'ready' };
  }

  /**
   * A passing instance for `target`, waking the process when none passes; rejects with
   * `TimeoutError` (504 with Retry-After at the edge) after `timeoutMs`, with 404/503 when the endpoint is off or
   * the app is not deployed. `onReady`, when a wake is waited for, is called with the upstream the
   * moment it resolves, before any promise reaction (the other watchers of the same registry change
   * queue theirs first): a proxy forwards then, and ignores the promise's resolution (ADR 0201).
   */
  async ready(
    target: WakeTarget,
    timeoutMs: number,
    onReady?: (upstream: ReadyUpstream) => void,
  ): Promise<ReadyUpstream> {
    if (!target.enabled || !target.deploy || !target.released) {
      // The map may predate a release or toggle written since (a first deploy sets the release without a
      // spec change): read the apps again before refusing; refusals are rare, so the read costs little.
      this.refreshHosts();
      target = this.exact.get(target.hostname) ?? this.wildcards.find((t) => t.hostname === target.hostname) ?? target;
    }
    if (!target.enabled)
      throw new NotFoundError(`endpoint ${target.hostname} is toggled off`, {
        code: 'endpoint_disabled',
        details: { hostname: target.hostname },
      });
    if (!target.deploy || !target.released) {
      throw new UnavailableError(`app "${target.app}" is not deployed`, {
        code: 'app_not_deployed',
        details: { app: target.app, hostname: target.hostname },
      });
    }
    if (target.standby === true)
      throw new UnavailableError(
        `app "${target.app}" runs ${target.process} only in standby regions (trafficWeight 0): no region takes traffic`,
        { code: 'standby_only', details: { app: target.app, hostname: target.hostname } },
      );
    const passing = await this.passing(target.service);
    if (passing.length > 0) return { instance: this.pick(target.service, passing), action: 'ready' };
    const key = `${target.app}/${target.process}`;
    let wake = this.wakes.get(key);
    if (!wake) {
      wake = await this.startWake(target, key);
    }
    wake.waiters += 1;
    const current = wake;
    let timer: NodeJS.Timeout | undefined;
    const listener =
      onReady && ((instance: ServiceInstance) => onReady({ instance, action: current.scaled ? 'scaled' : 'ready' }));
    if (listener) current.listeners.add(listener);
    try {
      const instance = await Promise.race([
        current.promise,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            this.stats.timeouts += 1;
            reject(
              new TimeoutError(`${target.app}/${target.process} did not become ready within ${timeoutMs} ms`, {
                code: 'wake_timeout',
                details: { app: target.app, process: target.process, hostname: target.hostname, timeoutMs },
                retryAfterSeconds: Math.max(1, Math.min(30, Math.ceil(timeoutMs / 1000))),
              }),
            );
          }, timeoutMs);
        }),
      ]);
      return { instance, action: current.scaled ? 'scaled' : 'ready' };
    } finally {
      clearTimeout(timer);
      if (listener) current.listeners.delete(listener);
      current.waiters -= 1;
      if (current.waiters === 0 && this.wakes.get(key) === current) {
        // Nobody waits any more: stop watching (the scale-up, if any, stays until the idle scaler undoes it).
        current.cancel();
        this.wakes.delete(key);
      }
    }
  }

  /** Marks a request for `target` as started (it keeps the process awake until `end`). */
  begin(target: WakeTarget): void {
    this.traffic.begun(`${target.app}/${target.process}`, Date.now());
  }

  /** Marks a request for `target` as finished; `instance` is the one it was forwarded to ({@link claim}), if any. */
  end(target: WakeTarget, instance?: ServiceInstance): void {
    this.traffic.ended(`${target.app}/${target.process}`, Date.now());
    if (instance !== undefined) this.balancer.release(instance);
  }

  /** Counts a request as forwarded to `instance` until `end(target, instance)`; returns the instance. */
  claim(instance: ServiceInstance): ServiceInstance {
    return this.balancer.claim(instance);
  }

  /** Requests in flight and last activity (ms since epoch) of a process, for the idle scaler. */
  activity(app: string, process: string): { inFlight: number; lastActivityMs: number | undefined } {
    return this.traffic.activity(`${app}/${process}`);
  }

  /** Cumulative traffic of a process up to `nowMs`, for the autoscaler. */
  trafficOf(app: string, process: string, nowMs = Date.now()): ProcessTraffic {
    return this.traffic.trafficOf(`${app}/${process}`, nowMs);
  }

  /** Stops every wait in progress. */
  close(): void {
    this.unwatch();
    for (const wake of this.wakes.values()) wake.cancel();
    this.wakes.clear();
  }

  private async passing(service: string): Promise<ServiceInstance[]> {
    const cached = this.passingCache.get(service);
    if (cached !== undefined) return cached;
    const passing = (await this.options.registry.instances(service))
      // A standby region's instances pass their checks but take no traffic (trafficWeight 0).
      .filter((i) => instanceStatus(i) === 'passing' && isRoutable(i))
      .sort((a, b) => a.id.localeCompare(b.id));
    this.passingCache.set(service, passing);
    return passing;
  }

  /** The instance of `instances` (sorted by id) a request goes to ({@link InstanceBalancer.pick}). */
  private pick(service: string, instances: readonly ServiceInstance[]): ServiceInstance {
    return this.balancer.pick(service, instances);
  }

  /** Current count of the target's task group in the scheduler (0 when the job is absent). */
  private async currentCount(target: WakeTarget): Promise<number> {
    for (const { scheduler } of await this.options.targets.all()) {
      for (const job of await scheduler.listJobs({ app: target.app })) {
        if (job.status !== 'running' || job.spec.type !== 'service') continue;
        const group = job.spec.taskGroups.find((g) => g.name === target.process);
        if (group) return group.count;
      }
    }
    return 0;
  }

  private async startWake(target: WakeTarget, key: string): Promise<Wake> {
    traceMark('wake:start');
    // Registered synchronously below, before any other await, so concurrent callers share it.
    let resolveFn!: (instance: ServiceInstance) => void;
    let rejectFn!: (error: Error) => void;
    const promise = new Promise<ServiceInstance>((resolve, reject) => {
      resolveFn = resolve;
      rejectFn = reject;
    });
    promise.catch(() => undefined);
    // Assigned once the watcher exists; `cancel` and `check` may run before that.
    // eslint-disable-next-line prefer-const
    let unsubscribe: (() => void) | undefined;
    // Requests wait on this wake: the driver's starting checks look for the port eagerly (ADR 0163).
    const unmarkAwaited = this.options.registry.markAwaited?.(target.service);
    let settled = false;
    const wake: Wake = {
      promise,
      scaled: false,
      waiters: 0,
      listeners: new Set(),
      cancel: () => {
        settled = true;
        unsubscribe?.();
        unmarkAwaited?.();
        rejectFn(new UnavailableError('the wake was cancelled', { code: 'wake_cancelled' }));
      },
    };
    this.wakes.set(key, wake);
    this.stats.wakes += 1;
    const settle = (instance: ServiceInstance): void => {
      traceMark('wake:resolved');
      settled = true;
      unsubscribe?.();
      unmarkAwaited?.();
      if (this.wakes.get(key) === wake) this.wakes.delete(key);
      resolveFn(instance);
      for (const listener of [...wake.listeners]) {
        try {
          listener(instance);
        } catch (error) {
          // A waiter's failure is its own: the registry's other watchers and waiters go on.
          this.options.logger.error({ err: error, hostname: target.hostname }, 'wake gateway: a waiter failed');
        }
      }
    };
    const check = async (): Promise<void> => {
      if (settled) return;
      const passing = await this.passing(target.service);
      if (passing.length > 0 && !settled) {
        settle(this.pick(target.service, passing));
      }
    };
    unsubscribe = this.options.registry.watch((change) => {
      if (change.service !== target.service || settled) return;
      if (change.status === 'passing' && change.instance !== undefined && isRoutable(change.instance)) {
        // The instance that passed, in the registry's own turn: no read of the registry first, so the
        // waiting requests are not queued behind the other watchers' work (ADR 0201).
        settle(change.instance);
        return;
      }
      void check().catch((error: unknown) => rejectFn(error as Error));
    });
    if (target.gatewayManaged) {
      // The autoscaler may have raised the count meanwhile (a request in flight during its pass): never lower it.
      const count = Math.max(
        await this.currentCount(target).catch(() => 0),
        this.options.scale.get(target.app, target.process) ?? 0,
      );
      if (count < 1) {
        wake.scaled = true;
        this.stats.scaleUps += 1;
        this.options.logger.info(
          { app: target.app, process: target.process, hostname: target.hostname },
          'wake: scaling to 1',
        );
      }
      traceMark('wake:scale');
      // Always (re)assert the desired count: the app controller is the single writer of jobs.
      this.options.scale.set(target.app, target.process, Math.max(1, count), {
        from: count,
        source: 'wake',
        reason: `a request for ${target.hostname} arrived with no allocation running`,
      });
    }
    await check();
    return wake;
  }
}

/** True when the spec declares regions and every region `process` runs in has `trafficWeight: 0`. */
function onlyStandby(spec: CanonicalAppSpec, process: string): boolean {
  const regions = spec.processes[process]?.regions ?? [];
  return regions.length > 0 && regions.every((region) => spec.regions[region]?.trafficWeight === 0);
}
