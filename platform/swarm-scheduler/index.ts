/** The swarm driver (docs/drivers.md). */
export { SwarmScheduler, type SwarmSchedulerOptions } from './swarm-scheduler.js';
export { engineAt, requireSwarmManager } from './engine.js';
export { EngineExec, dockerContainerOf } from './engine-exec.js';
