/**
 * Local scheduler: the embedded driver that supervises host processes.
 */
export { LocalScheduler } from './local-scheduler.js';
export type { LocalSchedulerOptions } from './local-scheduler-options.js';
export type { HostVolume } from './tasks/task-environment.js';
export { envLabel } from './tasks/task-environment.js';
export { pickFreePort } from './allocations/port-allocator.js';
export { probeHttp } from './allocations/http-health-check.js';
export type { ProbeResult } from './allocations/http-health-check.js';
export {
  isProcessAlive,
  listProcesses,
  PAGE_SIZE,
  parseStat,
  processTree,
  readProcess,
  readRssBytes,
} from './tasks/process-table.js';
export type { ProcessInfo } from './tasks/process-table.js';
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
} from './isolation/app-identity.js';
export type { AppIdentities, TaskIdentity } from './isolation/app-identity.js';
export { DEFAULT_TASK_LIMITS, detectPrivateMounts } from './tasks/task-sandbox.js';
export type { PrivateMounts, TaskLimits } from './tasks/task-sandbox.js';
