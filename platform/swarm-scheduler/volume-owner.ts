/**
 * Hands a group's new volumes to the user its tasks run as, before the group's tasks start
 * (`domain/scheduler/swarm/volumes.ts`): a global job of the app's image runs `chown` as root on every
 * ready node the group may run on, and is removed once each node's task completed. A key of image,
 * user, placement and volumes that was handed over needs no second run while the driver is open.
 */
import type Docker from 'dockerode';
import type { JobSpec } from '../../domain/scheduler/index.js';
import { UnprocessableError } from '../../domain/errors.js';
import {
  NODE_POOL_LABEL,
  VolumeLabel,
  shortHash,
  taskUser,
  volumeOwnerJob,
  volumeOwnerKey,
} from '../../domain/scheduler/swarm/index.js';

/** How long the owner job may take on every node (an image pull on a new node included). */
const OWNER_TIMEOUT_MS = 120_000;
const POLL_MS = 200;

interface EngineNode {
  readonly ID?: string;
  readonly Spec?: { readonly Availability?: string; readonly Labels?: Record<string, string> };
  readonly Status?: { readonly State?: string };
}

interface OwnerTask {
  readonly NodeID?: string;
  readonly Status?: { readonly State?: string; readonly Err?: string; readonly Message?: string };
}

/** Runs volume owner jobs on one engine. */
export class VolumeOwner {
  readonly #engine: Docker;
  readonly #nodeRegistry: string | undefined;
  readonly #done = new Set<string>();

  constructor(engine: Docker, nodeRegistry?: string) {
    this.#engine = engine;
    this.#nodeRegistry = nodeRegistry;
  }

  /** Hands the group's volumes to its tasks' user on every node that may run it; nothing when it mounts none. */
  async prepare(job: JobSpec, group: JobSpec['taskGroups'][number]): Promise<void> {
    if ((group.task.volumes ?? []).length === 0 || group.task.image === undefined) return;
    const user = taskUser(group.task.user);
    const key = volumeOwnerKey(job, group, user);
    if (this.#done.has(key)) return;
    const nodes = await this.#eligibleNodes(job);
    // No node may run the group yet: its tasks wait as pending, and the next version hands the volumes over.
    if (nodes.size === 0) return;
    const name = `svc-volume-owner-${shortHash(`${job.id}/${group.name}/${key}`, 12)}`;
    await this.#remove(name);
    const created = (await this.#engine.createService(volumeOwnerJob(job, group, name, user, this.#nodeRegistry))) as {
      id?: string;
      ID?: string;
    };
    const id = created.id ?? created.ID ?? name;
    try {
      await this.#completed(id, nodes, job, group.name);
      this.#done.add(key);
    } finally {
      await this.#remove(id);
    }
  }

  /** Removes owner jobs a stopped platform left behind. */
  async removeLeftovers(): Promise<void> {
    const services = await this.#engine.listServices({ filters: { label: [`${VolumeLabel.purpose}=volume-owner`] } });
    for (const service of services) await this.#remove(service.ID);
  }

  /** Ready, active nodes whose labels the job's placement accepts. */
  async #eligibleNodes(job: JobSpec): Promise<Set<string>> {
    const nodes = (await this.#engine.listNodes()) as EngineNode[];
    return new Set(
      nodes
        .filter((node) => node.Status?.State === 'ready' && node.Spec?.Availability === 'active')
        .filter((node) => job.nodePool === undefined || node.Spec?.Labels?.[NODE_POOL_LABEL] === job.nodePool)
        .flatMap((node) => (node.ID === undefined ? [] : [node.ID])),
    );
  }

  async #completed(service: string, nodes: Set<string>, job: JobSpec, group: string): Promise<void> {
    const deadline = Date.now() + OWNER_TIMEOUT_MS;
    for (;;) {
      const tasks = (await this.#engine.listTasks({ filters: { service: [service] } })) as OwnerTask[];
      const failed = tasks.find((task) => ['failed', 'rejected'].includes(task.Status?.State ?? ''));
      if (failed)
        throw new UnprocessableError(
          `the volumes of ${job.id}/${group} could not be handed to its user on node ${failed.NodeID ?? '?'}: ${failed.Status?.Err ?? failed.Status?.Message ?? 'the chown task failed'} (the app's image needs a chown command)`,
          { code: 'swarm_volume_owner_failed', details: { job: job.id, group, node: failed.NodeID ?? null } },
        );
      const complete = new Set(tasks.filter((t) => t.Status?.State === 'complete').map((t) => t.NodeID));
      if ([...nodes].every((node) => complete.has(node))) return;
      if (Date.now() > deadline)
        throw new UnprocessableError(
          `the volumes of ${job.id}/${group} were not handed to its user on every node within ${OWNER_TIMEOUT_MS / 1000} s`,
          {
            code: 'swarm_volume_owner_failed',
            details: { job: job.id, group, pending: [...nodes].filter((n) => !complete.has(n)) },
          },
        );
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  async #remove(service: string | undefined): Promise<void> {
    if (service === undefined) return;
    await this.#engine
      .getService(service)
      .remove()
      .catch(() => undefined);
  }
}
