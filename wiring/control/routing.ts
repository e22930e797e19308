/**
 * Builds and starts the routing service (controllers/routing/routing-service.ts) from the
 * configuration, fed by the app and spec controllers of the reconciler core.
 */
import type { Routing } from '../../controllers/routing/routing.js';
import { RoutingService, type RoutingServiceOptions } from '../../controllers/routing/routing-service.js';
import type { SvcConfig } from '../../platform/config.js';
import type { Reconcilers } from './reconcilers.js';

export type { Routing };

/** The routing service's settings, with the reconciler core in place of its parts. */
export type RoutingOptions = Omit<
  RoutingServiceOptions,
  'registry' | 'targets' | 'appController' | 'specController'
> & {
  readonly reconcilers: Reconcilers;
};

/** Starts the routing controller and its companions. */
export async function startRouting(options: RoutingOptions): Promise<Routing> {
  const { reconcilers, ...rest } = options;
  const routing = new RoutingService({
    ...rest,
    registry: reconcilers.registry,
    targets: reconcilers.targets,
    appController: reconcilers.appController,
    specController: reconcilers.specController,
  });
  await routing.start();
  return routing;
}

/** The routing settings of the configuration: the tunnel, the wake gateway's idle timeout, the edge's access observations. */
export function routingSettingsOf(
  config: Pick<
    SvcConfig,
    | 'tunnelConfigFile'
    | 'tunnelName'
    | 'tunnelCredentialsFile'
    | 'tunnelReloadCommand'
    | 'tunnelNetworking'
    | 'tunnelNodeIp'
    | 'wakeIdleTimeoutMs'
    | 'autoscaleIntervalMs'
    | 'edgeApiToken'
    | 'edgeZoneId'
    | 'edgeApiUrl'
    | 'edgeLookbackMs'
    | 'edgeLookbackMaxMs'
    | 'edgeSyncIntervalMs'
  >,
): Pick<RoutingOptions, 'tunnel' | 'idleMs' | 'autoscaling' | 'edge'> {
  return {
    tunnel: {
      file: config.tunnelConfigFile,
      tunnel: config.tunnelName,
      credentialsFile: config.tunnelCredentialsFile,
      ...(config.tunnelReloadCommand === undefined ? {} : { reloadCommand: config.tunnelReloadCommand }),
      networking: config.tunnelNetworking,
      nodeIp: config.tunnelNodeIp,
    },
    idleMs: config.wakeIdleTimeoutMs,
    autoscaling: config.autoscaleIntervalMs > 0,
    edge: {
      api:
        config.edgeApiToken !== undefined && config.edgeZoneId !== undefined
          ? { apiUrl: config.edgeApiUrl, apiToken: config.edgeApiToken, zoneId: config.edgeZoneId }
          : undefined,
      lookbackMs: config.edgeLookbackMs,
      lookbackMaxMs: config.edgeLookbackMaxMs,
      intervalMs: config.edgeSyncIntervalMs,
    },
  };
}
