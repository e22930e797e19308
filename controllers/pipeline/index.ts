/**
 * The deploy pipeline: handlers of the deploy, preflight and rollback operations, the health gate,
 * the deploy service and its events.
 */
export { createPipelineHandlers } from './deploy-pipeline.js';
export { DeployService } from './deploy-service.js';
export type { QueuedDeployment } from './deploy-service.js';
export { DeployEventType, emitDeployEvent } from './deploy-events.js';
export { observeGate, waitForGate } from './health-gate.js';
export type { GateObservation } from './health-gate.js';
export type { PipelineDependencies } from './pipeline-context.js';
export { appRegions, queueDeployment } from './deploy-queue.js';
export type { Deploys } from './deploys.js';
