/**
 * Local scheduler: the embedded driver that supervises host processes.
 */
export { LocalScheduler } from './local-scheduler.js';
export type { LocalSchedulerOptions } from './local-scheduler-options.js';
export type { HostVolume } from './task-environment.js';
export { envLabel } from './task-environment.js';
export { pickFreePort } from './port-allocator.js';
export { probeHttp } from './http-health-check.js';
export type { ProbeResult } from './http-health-check.js';
export {
  isProcessAlive,
  listProcesses,
  PAGE_SIZE,
  parseStat,
  processTree,
  readProcess,
  readRssBytes,
} from './process-table.js';
export type { ProcessInfo } from './process-table.js';
export {
  appUserName,
  appUsersCreatedHere,
  detectAppIdentities,
  ensureSystemUser,
  ensureSystemUserAsync,
  listAppUsers,
  removeSystemUser,
  MAX_USER_NAME,
  platformUserIdentities,
} from './app-identity.js';
export type { AppIdentities, TaskIdentity } from './app-identity.js';
export { DEFAULT_TASK_LIMITS, detectPrivateMounts } from './task-sandbox.js';
export type { PrivateMounts, TaskLimits } from './task-sandbox.js';
