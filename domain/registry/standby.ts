/**
 * Ready standby (`regions.<r>.trafficWeight: 0`): the region's instances are registered and
 * health-checked like any other, with the `standby` tag, and the wake gateway sends them no traffic.
 */
import type { ServiceInstance } from './health.js';

/** The registry tag of an instance of a standby region. */
export const STANDBY_TAG = 'standby';

/** True when traffic may be sent to `instance`: it is not a standby. */
export function isRoutable(instance: Pick<ServiceInstance, 'tags'>): boolean {
  return !instance.tags.includes(STANDBY_TAG);
}
