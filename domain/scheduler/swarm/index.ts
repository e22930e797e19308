/**
 * The swarm driver's pure parts: labels and names, the translation of a job's groups into Swarm
 * services, the jobs it runs, and tasks read back as allocations.
 */
export { ALLOC_DIR, FIRST_DYNAMIC_PORT, MANAGED_BY, NODE_POOL_LABEL, SwarmLabel } from './labels.js';
export { secretName, serviceName, shortHash } from './names.js';
export { imageForNodes } from './node-registry.js';
export {
  DEFAULT_NON_ROOT_ID,
  containerPorts,
  groupSecrets,
  groupVersionHash,
  taskUser,
  translateService,
  type ContainerPort,
  type GroupSecret,
  type TranslateServiceOptions,
} from './translate-service.js';
export {
  allocationStatusOf,
  isSvcTask,
  taskToAllocation,
  type SwarmPlacement,
  type SwarmTask,
} from './task-allocation.js';
export { validateJobForSwarm } from './validate-job.js';
export {
  VolumeLabel,
  placementConstraints,
  volumeMounts,
  volumeName,
  volumeOwnerJob,
  volumeOwnerKey,
  volumeVariables,
} from './volumes.js';
