/**
 * Registry port: service names, instances, health checks and the read/write interfaces.
 */
export { metricsServiceName, processServiceName } from './service-names.js';
export { HealthStatus, instanceHealth, instanceStatus, isStarting, worstStatus } from './health.js';
export type { HealthChange, HealthCheck, InstanceHealth, ServiceInstance } from './health.js';
export type { CheckUpdate, Registry, RegistryWriter, Unsubscribe } from './registry.js';
export { STANDBY_TAG, isRoutable } from './standby.js';
export { waitForHealthyInstances } from './wait-for-health.js';
export type { WaitForHealthOptions } from './wait-for-health.js';
