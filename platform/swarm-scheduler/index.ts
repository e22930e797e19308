/** The swarm driver (docs/drivers.md). */
export { SwarmScheduler, type SwarmSchedulerOptions } from './swarm-scheduler.js';
export { engineAt, requireSwarmManager } from './engine.js';
