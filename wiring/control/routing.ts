/**
 * Builds and starts the routing service (controllers/routing/routing-service.ts) from the
 * configuration, fed by the app and spec controllers of the reconciler core.
 */
import type { Routing } from '../../controllers/routing/routing.js';
import { RoutingService, type RoutingServiceOptions } from '../../controllers/routing/routing-service.js';
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
