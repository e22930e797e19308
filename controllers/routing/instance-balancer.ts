/**
 * The wake gateway's choice of an instance: least requests in flight, ties broken round robin,
 * with the load of each instance counted from the claim of a request to its end.
 */
import type { ServiceInstance } from '../../domain/registry/index.js';

/** Picks the instance of a service each request goes to. */
export class InstanceBalancer {
  private readonly roundRobin = new Map<string, number>();
  /** Requests forwarded to each instance (by instance id) and not finished: the balancer's load. */
  private readonly instanceLoad = new Map<string, number>();

  /** Counts a request as forwarded to `instance` until {@link release}; returns the instance. */
  claim(instance: ServiceInstance): ServiceInstance {
    this.instanceLoad.set(instance.id, (this.instanceLoad.get(instance.id) ?? 0) + 1);
    return instance;
  }

  /** Counts a request forwarded to `instance` as finished. */
  release(instance: ServiceInstance): void {
    const load = (this.instanceLoad.get(instance.id) ?? 1) - 1;
    if (load > 0) this.instanceLoad.set(instance.id, load);
    else this.instanceLoad.delete(instance.id);
  }

  /**
   * Least requests in flight over `instances` (sorted by id), ties broken round robin: with equal
   * load (every request finished, as sequential clients see it) the choice rotates.
   */
  pick(service: string, instances: readonly ServiceInstance[]): ServiceInstance {
    const start = (this.roundRobin.get(service) ?? 0) % instances.length;
    this.roundRobin.set(service, start + 1);
    let best = instances[start]!;
    let bestLoad = this.instanceLoad.get(best.id) ?? 0;
    for (let i = 1; i < instances.length && bestLoad > 0; i += 1) {
      const candidate = instances[(start + i) % instances.length]!;
      const load = this.instanceLoad.get(candidate.id) ?? 0;
      if (load < bestLoad) {
        best = candidate;
        bestLoad = load;
      }
    }
    return best;
  }
}
