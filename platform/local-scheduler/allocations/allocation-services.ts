/**
 * Allocation services: the registry side of one allocation: its service instances, their HTTP
 * health checks, and the first-pass notice that drives a start-before-stop hand-over (ADR 0160).
 */
import type { RegistryWriter } from '../../../domain/registry/index.js';
import type { AllocationRecord } from '../driver-state.js';
import { HttpHealthCheck } from './http-health-check.js';

/** What an allocation's services need from the runner. */
export interface AllocationServicesContext {
  readonly registry: RegistryWriter;
  /** Start-up window of health checks (see `HttpHealthCheckOptions.startupWindowMs`). */
  readonly healthStartupWindowMs?: number;
  /** Every check of the allocation passes now, where a moment ago one did not (or had not run). */
  passing?(record: AllocationRecord): void;
}

/** Registers one allocation's service instances and runs their checks. */
export class AllocationServices {
  readonly #record: AllocationRecord;
  readonly #ctx: AllocationServicesContext;
  #checks: HttpHealthCheck[] = [];
  readonly #checkOf = new Map<string, HttpHealthCheck>();
  #registered = false;
  #wasPassing = false;

  constructor(record: AllocationRecord, ctx: AllocationServicesContext) {
    this.#record = record;
    this.#ctx = ctx;
  }

  /** True when the allocation has checks and every one passed at its latest probe. */
  get passing(): boolean {
    return this.#checks.length > 0 && this.#checks.every((c) => c.lastStatus === 'passing');
  }

  /** Registers the instances (once) and starts their checks in their start-up window. */
  register(): void {
    if (this.#registered) return;
    this.#registered = true;
    this.#publish(false);
  }

  /** Re-registers services after a promotion changed the canary tag (checks keep running). */
  reregister(): void {
    if (!this.#registered) return;
    this.#publish(true);
  }

  /** Stops the checks without touching the registry (the driver detaches; the process lives on). */
  stopChecks(): void {
    for (const check of this.#checks) check.stop();
    this.#checks = [];
    this.#checkOf.clear();
  }

  /** Stops the checks and removes the instances from the registry. */
  unregister(): void {
    this.stopChecks();
    if (!this.#registered) return;
    this.#registered = false;
    for (const service of this.#record.group.services)
      this.#ctx.registry.deregister(`${this.#record.id}-${service.name}`);
  }

  /**
   * Publishes the allocation's instances. A fresh registration starts its checks in their start-up
   * window; a re-tag (canary promotion) keeps the running checks and their latest verdict, so a
   * promoted canary is never unrouted.
   */
  #publish(retag: boolean): void {
    const rec = this.#record;
    for (const service of rec.group.services) {
      const port = rec.ports.find((p) => p.label === service.portLabel);
      if (!port) continue;
      const instanceId = `${rec.id}-${service.name}`;
      const checkId = `${instanceId}:http`;
      const running = retag ? this.#checkOf.get(instanceId) : undefined;
      const passing = running?.lastStatus === 'passing';
      this.#ctx.registry.register({
        id: instanceId,
        service: service.name,
        app: rec.app,
        process: rec.taskGroup,
        allocationId: rec.id,
        address: port.hostIp,
        port: port.value,
        tags: [...(service.tags ?? []), ...(rec.canary ? ['canary'] : [])],
        checks: service.check
          ? [
              passing
                ? {
                    id: checkId,
                    name: `HTTP GET ${service.check.path}`,
                    status: 'passing',
                    output: 'passing before the re-registration',
                    lastCheckedAt: new Date().toISOString(),
                  }
                : {
                    id: checkId,
                    name: `HTTP GET ${service.check.path}`,
                    status: 'critical',
                    output: 'starting: no check has passed yet',
                    starting: true,
                  },
            ]
          : [],
      });
      if (service.check && running === undefined) {
        const check = new HttpHealthCheck({
          registry: this.#ctx.registry,
          service: service.name,
          instanceId,
          checkId,
          url: `http://${port.hostIp}:${port.value}${service.check.path}`,
          intervalMs: service.check.interval.milliseconds,
          timeoutMs: service.check.timeout.milliseconds,
          ...(this.#ctx.healthStartupWindowMs !== undefined
            ? { startupWindowMs: this.#ctx.healthStartupWindowMs }
            : {}),
          onResult: () => this.#onCheckResult(),
        });
        check.start();
        this.#checks.push(check);
        this.#checkOf.set(instanceId, check);
      }
    }
  }

  #onCheckResult(): void {
    const now = this.passing;
    if (now && !this.#wasPassing) this.#ctx.passing?.(this.#record);
    this.#wasPassing = now;
  }
}
