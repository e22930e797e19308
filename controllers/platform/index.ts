/**
 * The platform self-upgrade lane: handlers run by the host agent, the agent, and the API's service.
 */
export { PlatformLane } from './platform-lane.js';
export type { PlatformLaneOptions } from './platform-lane.js';
export { HostAgent } from './host-agent.js';
export type { HostAgentOptions } from './host-agent.js';
export { PlatformLaneService } from './platform-lane-service.js';
export type { LaneOperationView, LaneRequest } from './platform-lane-service.js';
export { LaneStepFailure, LaneSteps } from './lane-steps.js';
export { LaneDataBackup } from './lane-data-backup.js';
export type { LaneDataBackupOptions } from './lane-data-backup.js';
