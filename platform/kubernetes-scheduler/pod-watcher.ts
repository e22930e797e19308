/**
 * Pod watcher: a Kubernetes watch on the driver's pods that turns each pod event into an
 * `AllocationChange` and keeps the registry in step with pod readiness (one instance per pod and
 * registered service; its check is the pod's `Ready` condition, fed by the readiness probe).
 */
import { EventEmitter } from 'node:events';
import { Watch, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { RegistryWriter, ServiceInstance } from '../../domain/registry/index.js';
import type { AllocationChange } from '../../domain/scheduler/index.js';
import { canonicalJson as canonicalJsonOf } from '../../domain/canonical-json.js';
import {
  MANAGED_BY,
  SvcAnnotation,
  SvcLabel,
  isSvcPod,
  podToAllocation,
  type AllocationPlacement,
} from '../../domain/scheduler/kubernetes/index.js';
import type { KubeClient } from './kube-client.js';

interface RegisteredService {
  readonly name: string;
  readonly portLabel: string;
  readonly tags: readonly string[];
  readonly checked: boolean;
}

/** Options of {@link PodWatcher}. */
export interface PodWatcherOptions {
  readonly config: KubeConfig;
  readonly client: KubeClient;
  readonly registry: RegistryWriter;
  readonly placement: AllocationPlacement;
  readonly logger: Logger;
  /** Delay before re-establishing a dropped watch. @default 1000 ms */
  readonly retryMs?: number;
}

/** Watches the driver's pods; call `start()` once and `close()` to stop. */
export class PodWatcher {
  readonly events = new EventEmitter();
  readonly #options: PodWatcherOptions;
  readonly #seen = new Map<string, ReturnType<typeof podToAllocation>>();
  readonly #instances = new Map<string, string>();
  #abort: AbortController | undefined;
  #retry: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: PodWatcherOptions) {
    this.#options = options;
    this.events.setMaxListeners(0);
  }

  /** Lists the pods (registering their instances), then watches from that list's resource version. */
  async start(): Promise<void> {
    const pods = await this.#options.client.list('Pod', `${SvcLabel.managedBy}=${MANAGED_BY}`);
    const names = new Set(pods.map((p) => p.metadata?.name ?? ''));
    for (const pod of pods) this.#observe('MODIFIED', pod);
    for (const [name, allocation] of this.#seen) if (!names.has(name)) this.#forget(name, allocation);
    await this.#watch();
  }

  async #watch(): Promise<void> {
    if (this.#closed) return;
    const { client, config, logger } = this.#options;
    const watch = new Watch(config);
    this.#abort = await watch.watch(
      `/api/v1/namespaces/${client.namespace}/pods`,
      { labelSelector: `${SvcLabel.managedBy}=${MANAGED_BY}`, allowWatchBookmarks: false },
      (type, pod: V1Pod) => this.#observe(type, pod),
      (error: unknown) => {
        if (this.#closed) return;
        if (error) logger.warn({ err: error }, 'kubernetes pod watch ended; re-listing');
        this.#retry = setTimeout(
          () => void this.start().catch((e: unknown) => logger.warn({ err: e }, 'kubernetes pod re-list failed')),
          error ? (this.#options.retryMs ?? 1000) : 0,
        );
        this.#retry.unref();
      },
    );
  }

  /** Stops the watch; registered instances are deregistered. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#retry);
    this.#abort?.abort();
    for (const id of this.#instances.keys()) this.#options.registry.deregister(id);
    this.#instances.clear();
    this.events.removeAllListeners();
  }

  #observe(type: string, pod: V1Pod): void {
    if (this.#closed || !isSvcPod(pod)) return;
    const name = pod.metadata?.name ?? '';
    const previous = this.#seen.get(name);
    if (type === 'DELETED') {
      this.#forget(name, {
        ...podToAllocation(pod, this.#options.placement),
        status: 'complete',
        desiredStatus: 'stop',
      });
      return;
    }
    const allocation = podToAllocation(pod, this.#options.placement);
    this.#seen.set(name, allocation);
    this.#register(pod, allocation.status === 'running' && !pod.metadata?.deletionTimestamp);
    if (
      previous &&
      canonicalJsonOf({ ...previous, modifiedAt: '' }) === canonicalJsonOf({ ...allocation, modifiedAt: '' })
    )
      return;
    const event = allocation.task.events.at(-1);
    const change: AllocationChange = {
      allocation,
      ...(previous && previous.status !== allocation.status ? { previousStatus: previous.status } : {}),
      ...(event && event.type !== 'Received' ? { event } : {}),
    };
    this.events.emit('change', change);
  }

  #forget(name: string, allocation: ReturnType<typeof podToAllocation>): void {
    const previous = this.#seen.get(name);
    this.#seen.delete(name);
    for (const id of [...this.#instances.keys()]) {
      if (id.startsWith(`${name}/`)) {
        this.#instances.delete(id);
        this.#options.registry.deregister(id);
      }
    }
    this.events.emit('change', {
      allocation,
      ...(previous && previous.status !== allocation.status ? { previousStatus: previous.status } : {}),
    } satisfies AllocationChange);
  }

  #register(pod: V1Pod, live: boolean): void {
    const name = pod.metadata?.name ?? '';
    const annotations = pod.metadata?.annotations ?? {};
    const services = parse<RegisteredService[]>(annotations[SvcAnnotation.services], []);
    const ports = parse<{ label: string; value: number }[]>(annotations[SvcAnnotation.ports], []);
    const ready = (pod.status?.conditions ?? []).find((c) => c.type === 'Ready');
    for (const service of services) {
      const id = `${name}/${service.name}`;
      const port = ports.find((p) => p.label === service.portLabel);
      if (!live || !port || !pod.status?.podIP) {
        if (this.#instances.delete(id)) this.#options.registry.deregister(id);
        continue;
      }
      const passing = ready?.status === 'True';
      const instance: ServiceInstance = {
        id,
        service: service.name,
        app: annotations[SvcAnnotation.app] ?? '',
        process: annotations[SvcAnnotation.group] ?? '',
        allocationId: name,
        address: pod.status.podIP,
        port: port.value,
        tags: [...service.tags, ...(pod.metadata?.labels?.[SvcLabel.role] === 'canary' ? ['canary'] : [])],
        checks: service.checked
          ? [
              {
                id: `${id}:ready`,
                name: 'Kubernetes readiness probe',
                status: passing ? 'passing' : 'critical',
                output: passing ? 'pod is Ready' : `pod is not Ready${ready?.reason ? ` (${ready.reason})` : ''}`,
              },
            ]
          : [],
      };
      const text = canonicalJsonOf(instance);
      if (this.#instances.get(id) === text) continue;
      this.#instances.set(id, text);
      this.#options.registry.register(instance);
    }
  }
}

function parse<T>(text: string | undefined, fallback: T): T {
  if (text === undefined) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}
