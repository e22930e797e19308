/**
 * Routing domain: the desired edge ingress, the tunnel config plan, endpoint toggles, wake timeouts
 * and access aggregates. Pure: no I/O.
 */
export { accessPatterns, AccessSource, hourOf, statusBucket } from './access-buckets.js';
export type { AccessBucket, HostnamePattern, StatusBucket } from './access-buckets.js';
export { desiredIngress, isGatewayManaged, Networking, publicProcess, serviceAddress } from './desired-ingress.js';
export type { AddressOptions, DesiredRule, RoutableApp } from './desired-ingress.js';
export { edgeSyncWindows } from './edge-sync-windows.js';
export type { SyncWindow } from './edge-sync-windows.js';
export { disabledHostnames, toggleHostname } from './endpoint-toggles.js';
export type { EndpointToggle } from './endpoint-toggles.js';
export { hostnameMatches, hostOfHeader, isLocalHostname, normalizeHostname } from './hostnames.js';
export { planTunnelConfig, sameConfig } from './plan-tunnel-config.js';
export type { TunnelConfigPlan, TunnelIdentity } from './plan-tunnel-config.js';
export { CATCH_ALL_RULE, CATCH_ALL_SERVICE, catchAllIsLast, isCatchAll } from './tunnel-config.js';
export type { IngressRule, TunnelConfig } from './tunnel-config.js';
export { DEFAULT_WAKE_TIMEOUT_MS, MAX_WAKE_TIMEOUT_MS, wakeTimeoutMs } from './wake-timeout.js';
export { aggregateLogpush, logpushRecords, logTimestamp } from './logpush-records.js';
export type { LogpushAggregate, LogpushCount } from './logpush-records.js';
