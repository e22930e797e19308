/**
 * Edge adapters: the tunnel config file, its reload command and the edge analytics API.
 */
export { fetchHourlyCounts, HOURLY_REQUESTS_QUERY } from './edge-analytics-client.js';
export type { EdgeAnalyticsOptions, HourlyCount } from './edge-analytics-client.js';
export { runReloadCommand } from './reload-command.js';
export type { ReloadResult } from './reload-command.js';
export { readTunnelConfigFile, renderTunnelConfig } from './tunnel-config-file.js';
export { writeFileAtomic } from '../files/write-file-atomic.js';
export type { TunnelFileRead } from './tunnel-config-file.js';
export {
  EDGE_ASSERTION_HEADERS,
  edgeIdentityVerifier,
  type EdgeIdentity,
  type EdgeIdentityOptions,
} from './edge-identity.js';
