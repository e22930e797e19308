/**
 * Kube client: the few Kubernetes API calls the kubernetes driver makes (server-side apply, read,
 * list by label, delete, Job creation, pod logs, pod metrics) through `@kubernetes/client-node`,
 * with API failures turned into domain errors.
 */
import {
  ApiException,
  AppsV1Api,
  BatchV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1CronJob,
  type V1Deployment,
  type V1Job,
  type V1Pod,
  type V1Secret,
  type V1Service,
} from '@kubernetes/client-node';
import { ConflictError, DomainError, UnavailableError, ValidationError } from '../../domain/errors.js';

/** Field manager of every server-side apply. */
export const FIELD_MANAGER = 'svc';

/** Object kinds the driver writes, with their typed shapes. */
export interface KindMap {
  Deployment: V1Deployment;
  Service: V1Service;
  Secret: V1Secret;
  CronJob: V1CronJob;
  Job: V1Job;
  Pod: V1Pod;
}
export type Kind = keyof KindMap;

/** The HTTP status of a failed API call, or undefined for other errors. */
export function apiStatus(error: unknown): number | undefined {
  if (error instanceof ApiException) return error.code;
  const code = (error as { code?: unknown; statusCode?: unknown } | null)?.statusCode;
  return typeof code === 'number' ? code : undefined;
}

/** A domain error for a failed API call (`what` names the call). */
export function apiError(what: string, error: unknown): Error {
  if (error instanceof DomainError) return error;
  const status = apiStatus(error);
  const body = error instanceof ApiException ? (error.body as { message?: string } | string | undefined) : undefined;
  const detail =
    typeof body === 'string' ? (safeMessage(body) ?? body.slice(0, 300)) : (body?.message ?? (error as Error).message);
  const message = `kubernetes: ${what} failed${status !== undefined ? ` (HTTP ${status})` : ''}: ${detail}`;
  if (status === 409) return new ConflictError(message, { cause: error });
  if (status === 400 || status === 422) return new ValidationError(message, { cause: error });
  return new UnavailableError(message, { cause: error, code: 'kubernetes_unavailable' });
}

function safeMessage(text: string): string | undefined {
  try {
    return (JSON.parse(text) as { message?: string }).message;
  } catch {
    return undefined;
  }
}

/** Typed access to one namespace. */
export class KubeClient {
  readonly namespace: string;
  readonly #apps: AppsV1Api;
  readonly #core: CoreV1Api;
  readonly #batch: BatchV1Api;
  readonly #custom: CustomObjectsApi;

  constructor(config: KubeConfig, namespace: string) {
    this.namespace = namespace;
    this.#apps = config.makeApiClient(AppsV1Api);
    this.#core = config.makeApiClient(CoreV1Api);
    this.#batch = config.makeApiClient(BatchV1Api);
    this.#custom = config.makeApiClient(CustomObjectsApi);
  }

  /** The object, or undefined when it does not exist. */
  async read<K extends Kind>(kind: K, name: string): Promise<KindMap[K] | undefined> {
    const p = { name, namespace: this.namespace };
    try {
      switch (kind) {
        case 'Deployment':
          return (await this.#apps.readNamespacedDeployment(p)) as KindMap[K];
        case 'Service':
          return (await this.#core.readNamespacedService(p)) as KindMap[K];
        case 'Secret':
          return await this.#core.readNamespacedSecret(p);
        case 'CronJob':
          return (await this.#batch.readNamespacedCronJob(p)) as KindMap[K];
        case 'Job':
          return (await this.#batch.readNamespacedJob(p)) as KindMap[K];
        default:
          return (await this.#core.readNamespacedPod(p)) as KindMap[K];
      }
    } catch (error) {
      if (apiStatus(error) === 404) return undefined;
      throw apiError(`read ${kind} ${this.namespace}/${name}`, error);
    }
  }

  /** Objects of `kind` matching a label selector. */
  async list<K extends Kind>(kind: K, labelSelector: string): Promise<KindMap[K][]> {
    const p = { namespace: this.namespace, labelSelector };
    try {
      switch (kind) {
        case 'Deployment':
          return (await this.#apps.listNamespacedDeployment(p)).items as KindMap[K][];
        case 'Service':
          return (await this.#core.listNamespacedService(p)).items as KindMap[K][];
        case 'Secret':
          return (await this.#core.listNamespacedSecret(p)).items;
        case 'CronJob':
          return (await this.#batch.listNamespacedCronJob(p)).items as KindMap[K][];
        case 'Job':
          return (await this.#batch.listNamespacedJob(p)).items as KindMap[K][];
        default:
          return (await this.#core.listNamespacedPod(p)).items as KindMap[K][];
      }
    } catch (error) {
      throw apiError(`list ${kind} in ${this.namespace} (${labelSelector})`, error);
    }
  }

  /** Server-side apply (`application/apply-patch+yaml`, field manager `svc`, forced): creates or updates. */
  async apply(kind: Exclude<Kind, 'Pod' | 'Job'>, object: { metadata?: { name?: string } }): Promise<void> {
    const name = object.metadata?.name ?? '';
    const p = { name, namespace: this.namespace, body: object, fieldManager: FIELD_MANAGER, force: true };
    const options = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);
    try {
      switch (kind) {
        case 'Deployment':
          await this.#apps.patchNamespacedDeployment(p, options);
          return;
        case 'Service':
          await this.#core.patchNamespacedService(p, options);
          return;
        case 'Secret':
          await this.#core.patchNamespacedSecret(p, options);
          return;
        default:
          await this.#batch.patchNamespacedCronJob(p, options);
      }
    } catch (error) {
      throw apiError(`apply ${kind} ${this.namespace}/${name}`, error);
    }
  }

  /** Deletes an object (dependents in the background); false when it was already gone. */
  async remove(kind: Kind, name: string): Promise<boolean> {
    const p = { name, namespace: this.namespace, propagationPolicy: 'Background' };
    try {
      switch (kind) {
        case 'Deployment':
          await this.#apps.deleteNamespacedDeployment(p);
          break;
        case 'Service':
          await this.#core.deleteNamespacedService(p);
          break;
        case 'Secret':
          await this.#core.deleteNamespacedSecret(p);
          break;
        case 'CronJob':
          await this.#batch.deleteNamespacedCronJob(p);
          break;
        case 'Job':
          await this.#batch.deleteNamespacedJob(p);
          break;
        default:
          await this.#core.deleteNamespacedPod(p);
      }
      return true;
    } catch (error) {
      if (apiStatus(error) === 404) return false;
      throw apiError(`delete ${kind} ${this.namespace}/${name}`, error);
    }
  }

  /** Creates a Job (one run); a Job of that name already existing is a `ConflictError`. */
  async createJob(job: V1Job): Promise<V1Job> {
    try {
      return await this.#batch.createNamespacedJob({ namespace: this.namespace, body: job });
    } catch (error) {
      throw apiError(`create Job ${this.namespace}/${job.metadata?.name}`, error);
    }
  }

  /** The log of a pod's first container, or undefined when it cannot be read (pod gone, not started). */
  async podLog(name: string, limitBytes: number): Promise<string | undefined> {
    try {
      return await this.#core.readNamespacedPodLog({ name, namespace: this.namespace, limitBytes });
    } catch {
      return undefined;
    }
  }

  /**
   * CPU (cores) and working-set memory (bytes) of the pods matching `labelSelector`, by pod name, from
   * the metrics API (`metrics.k8s.io/v1beta1` PodMetrics); empty when the cluster serves no metrics.
   */
  async podUsage(labelSelector: string): Promise<Map<string, { cores: number; bytes: number; sampledAt?: string }>> {
    let list: {
      items?: {
        metadata?: { name?: string };
        timestamp?: string;
        containers?: { usage?: { cpu?: string; memory?: string } }[];
      }[];
    };
    try {
      list = await this.#custom.listNamespacedCustomObject({
        group: 'metrics.k8s.io',
        version: 'v1beta1',
        namespace: this.namespace,
        plural: 'pods',
        labelSelector,
      });
    } catch {
      return new Map();
    }
    const out = new Map<string, { cores: number; bytes: number; sampledAt?: string }>();
    for (const item of list.items ?? []) {
      const name = item.metadata?.name;
      if (name === undefined) continue;
      const containers = item.containers ?? [];
      out.set(name, {
        cores: containers.reduce((sum, c) => sum + parseCpuQuantity(c.usage?.cpu ?? '0'), 0),
        bytes: containers.reduce((sum, c) => sum + parseQuantity(c.usage?.memory ?? '0'), 0),
        ...(item.timestamp ? { sampledAt: item.timestamp } : {}),
      });
    }
    return out;
  }

  /** Working-set memory of a pod from the metrics API, in bytes; `UnavailableError` when the cluster serves no metrics. */
  async podMemoryBytes(name: string): Promise<{ bytes: number; sampledAt?: string }> {
    let metrics: { timestamp?: string; containers?: { usage?: { memory?: string } }[] };
    try {
      metrics = await this.#custom.getNamespacedCustomObject({
        group: 'metrics.k8s.io',
        version: 'v1beta1',
        namespace: this.namespace,
        plural: 'pods',
        name,
      });
    } catch (error) {
      const status = apiStatus(error);
      throw new UnavailableError(
        `kubernetes: memory usage of allocation ${name} is unavailable: ${status === 404 ? 'the metrics API (metrics.k8s.io, e.g. metrics-server) is not installed or has no sample for the pod yet' : `the metrics API failed${status !== undefined ? ` (HTTP ${status})` : ''}`}`,
        { cause: error, code: 'metrics_unavailable' },
      );
    }
    const bytes = (metrics.containers ?? []).reduce((sum, c) => sum + parseQuantity(c.usage?.memory ?? '0'), 0);
    return { bytes, ...(metrics.timestamp ? { sampledAt: metrics.timestamp } : {}) };
  }
}

const SUFFIX: Record<string, number> = {
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
  Ti: 1024 ** 4,
};

const CPU_SUFFIX: Record<string, number> = { '': 1, m: 1e-3, u: 1e-6, n: 1e-9 };

/** Cores of a Kubernetes CPU quantity such as `250m`, `1`, or the metrics API's `12345678n`. */
export function parseCpuQuantity(quantity: string): number {
  const match = /^(\d+(?:\.\d+)?)(m|u|n)?$/.exec(quantity.trim());
  if (!match) return 0;
  return Number(match[1]) * (CPU_SUFFIX[match[2] ?? ''] ?? 1);
}

/** Bytes of a Kubernetes memory quantity such as `12345Ki`, `64Mi` or `1G`. */
export function parseQuantity(quantity: string): number {
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(quantity.trim());
  if (!match) return 0;
  return Math.round(Number(match[1]) * (SUFFIX[match[2] ?? ''] ?? 1));
}
