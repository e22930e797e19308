/**
 * The operator's wake targets: every process with a port, with its public, private and local
 * endpoints, readiness, and the wake gateway URL of each public hostname.
 */
import { instanceStatus, processServiceName, type Registry } from '../../domain/registry/index.js';
import {
  isGatewayManaged,
  normalizeHostname,
  publicProcess,
  serviceAddress,
  type AddressOptions,
} from '../../domain/routing/index.js';
import type { Db } from '../../store/database.js';
import { listApps } from '../../store/control/apps.js';
import { listEndpointToggles } from '../../store/control/routing-toggles.js';
import type { SchedulerTargets } from '../apps/scheduler-targets.js';

/** Readiness of a wake target. */
export type WakeReadiness = 'ready' | 'starting' | 'scaled_to_zero' | 'unhealthy' | 'not_deployed';

/** One endpoint of a wake target. */
export interface WakeEndpoint {
  readonly scope: 'public' | 'private' | 'local';
  readonly url: string;
  readonly hostname?: string;
  readonly enabled?: boolean;
  readonly routed?: boolean;
  /** Explicit-path form of the wake gateway for a public hostname. */
  readonly wakeGatewayUrl?: string;
}

/** One process the gateway can reach. */
export interface WakeTargetView {
  readonly app: string;
  readonly process: string;
  readonly service: string;
  readonly gatewayManaged: boolean;
  readonly readiness: WakeReadiness;
  readonly desiredCount: number;
  readonly instances: { readonly passing: number; readonly total: number };
  readonly endpoints: readonly WakeEndpoint[];
}

export interface WakeTargetSources {
  readonly db: Db;
  readonly registry: Registry;
  readonly targets: SchedulerTargets;
  readonly address: AddressOptions;
  /** Hostnames currently in the tunnel config. */
  readonly routedHostnames: () => ReadonlySet<string>;
}

/** Every process with a port, with readiness and endpoints. */
export async function wakeTargets(
  sources: WakeTargetSources,
  controlUrl: string,
): Promise<{ targets: WakeTargetView[] }> {
  const disabled = new Set(
    listEndpointToggles(sources.db)
      .filter((t) => !t.enabled)
      .map((t) => t.hostname),
  );
  const routed = sources.routedHostnames();
  const jobs = [];
  for (const { scheduler } of await sources.targets.all()) jobs.push(...(await scheduler.listJobs()));
  const out: WakeTargetView[] = [];
  for (const app of listApps(sources.db)) {
    const spec = app.spec;
    if (!spec || app.deletedAt !== null) continue;
    const pub = publicProcess(spec);
    for (const [process, definition] of Object.entries(spec.processes).sort(([a], [b]) => a.localeCompare(b))) {
      if (definition.port === undefined) continue;
      const service = processServiceName(spec.name, process);
      const instances = await sources.registry.instances(service);
      const passing = instances.filter((i) => instanceStatus(i) === 'passing').length;
      const job = jobs.find(
        (j) =>
          j.status === 'running' &&
          j.spec.app === spec.name &&
          j.spec.type === 'service' &&
          j.spec.taskGroups.some((g) => g.name === process),
      );
      const desiredCount = job?.spec.taskGroups.find((g) => g.name === process)?.count ?? 0;
      const readiness: WakeReadiness =
        !spec.deploy || app.release === null || job === undefined
          ? 'not_deployed'
          : passing > 0
            ? 'ready'
            : desiredCount === 0
              ? 'scaled_to_zero'
              : instances.length === 0
                ? 'starting'
                : 'unhealthy';
      const endpoints: WakeEndpoint[] = [];
      if (process === pub) {
        for (const endpoint of spec.endpoints ?? []) {
          const hostname = normalizeHostname(endpoint.url);
          if (hostname === undefined) continue;
          endpoints.push({
            scope: 'public',
            url: `https://${hostname}/`,
            hostname,
            enabled: !disabled.has(hostname),
            routed: routed.has(hostname),
            ...(hostname.startsWith('*.') ? {} : { wakeGatewayUrl: `${controlUrl}/api/wake-gateway/${hostname}/` }),
          });
        }
      }
      const privateUrl = serviceAddress(spec, process, sources.address);
      // Only a hostPort is a fixed address; other processes change port with each allocation (see local below).
      if (privateUrl !== undefined && definition.hostPort !== undefined)
        endpoints.push({ scope: 'private', url: `${privateUrl}/` });
      for (const instance of instances)
        endpoints.push({ scope: 'local', url: `http://${instance.address}:${instance.port}/` });
      out.push({
        app: spec.name,
        process,
        service,
        gatewayManaged: isGatewayManaged(spec, process),
        readiness,
        desiredCount,
        instances: { passing, total: instances.length },
        endpoints,
      });
    }
  }
  return { targets: out };
}
