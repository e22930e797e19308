/**
 * Kubernetes translation: pure mapping between scheduler jobs and Kubernetes objects, used by the
 * kubernetes driver (`platform/kubernetes-scheduler`).
 */
export { ALLOC_DIR, MANAGED_BY, SvcAnnotation, SvcLabel, SvcRole, selector } from './labels.js';
export { dns1035Label, dnsLabel, labelValue, portName, shortHash } from './names.js';
export { DEFAULT_NON_ROOT_ID, taskSecurityContext } from './security-context.js';
export {
  FIRST_DYNAMIC_PORT,
  canaryObjectName,
  containerPorts,
  cronJobName,
  groupDeployment,
  groupObjectName,
  groupVersionHash,
  jobLabels,
  memoryLimitBytes,
  translateJob,
} from './translate-job.js';
export type { KubernetesJobObjects, KubernetesTarget, TranslateJobOptions } from './translate-job.js';
export { validateJobForKubernetes } from './validate-job.js';
export { fingerprintOf, withFingerprint } from './object-fingerprint.js';
export { runJob, runJobName, type RunArguments } from './run-job.js';
export { jobRecordName, jobRecordSecret, readJobRecord, specHash } from './job-record.js';
export type { JobRecord, JobRecordState, TemplateVersion } from './job-record.js';
export { isSvcPod, isoTime, jobExecutionStatus, jobToExecution, podToAllocation } from './pod-allocation.js';
export type { AllocationPlacement } from './pod-allocation.js';
