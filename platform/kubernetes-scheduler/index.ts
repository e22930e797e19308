/**
 * Kubernetes scheduler: the driver that runs jobs as Deployments, Services, CronJobs and Jobs.
 */
export { KubernetesScheduler } from './kubernetes-scheduler.js';
export type { KubernetesSchedulerOptions } from './kubernetes-scheduler.js';
export { kubeConfigForRegion } from './kube-config.js';
export type { KubeConfigSource } from './kube-config.js';
export { FIELD_MANAGER, parseQuantity } from './kube-client.js';
