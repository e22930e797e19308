/**
 * The Swarm objects the swarm driver writes for a job: each group's service (one per version, see
 * `domain/scheduler/swarm`), its secrets, and the overlay network tasks join. A service is rewritten
 * only where it differs from what the driver would write (`service-spec.ts`).
 */
import fs from 'node:fs';
import path from 'node:path';
import type Docker from 'dockerode';
import type { JobSpec, WriteOutcome } from '../../domain/scheduler/index.js';
import {
  MANAGED_BY,
  SwarmLabel,
  containerPorts,
  groupSecrets,
  groupVersionHash,
  secretName,
  serviceName,
  translateService,
} from '../../domain/scheduler/swarm/index.js';
import { containerOf, drifted } from './service-spec.js';
import { VolumeOwner } from './volume-owner.js';

/** A service as the engine lists it. */
export type EngineService = Docker.Service & { Spec?: Docker.ServiceSpec; Version?: { Index?: number } };

/** The network every task joins. */
export const NETWORK = 'svc-apps';

/** Services and secrets carrying this label are the driver's. */
export const MANAGED = { label: [`${SwarmLabel.managedBy}=${MANAGED_BY}`] };

/** Options of {@link SwarmObjects}. */
export interface SwarmObjectsOptions {
  readonly engine: Docker;
  readonly region: string;
  /** Each app's secret files, `<appSecretsDir>/<app>/<KEY>`. @default none */
  readonly appSecretsDir?: string;
  /** The address nodes pull the managed registry's images from. @default as released */
  readonly nodeRegistry?: string;
}

/** Writes and reads the driver's services, secrets and network. */
export class SwarmObjects {
  readonly #options: SwarmObjectsOptions;
  readonly #engine: Docker;
  readonly #region: string;
  /** Hands a group's volumes to its tasks' user before they start. */
  readonly volumes: VolumeOwner;

  constructor(options: SwarmObjectsOptions) {
    this.#options = options;
    this.#engine = options.engine;
    this.#region = options.region;
    this.volumes = new VolumeOwner(options.engine, options.nodeRegistry);
  }

  /** Writes one group's secrets and service (`unchanged` when it already matches); the service's name. */
  async write(
    job: JobSpec,
    group: JobSpec['taskGroups'][number],
    version: number,
    replicas: number,
  ): Promise<{ outcome: WriteOutcome; service: string }> {
    const secrets = await this.secretsFor(job, group);
    const existing = await this.currentService(job, group);
    const name = existing?.Spec?.Name ?? serviceName(job.id, group.name, groupVersionHash(job, group));
    const jobVersion =
      existing?.Spec?.Labels?.[SwarmLabel.version] === groupVersionHash(job, group)
        ? Number(existing.Spec.Labels[SwarmLabel.jobVersion] ?? version)
        : version;
    const spec = translateService(job, group, name, {
      region: this.#region,
      jobVersion,
      secrets,
      replicas,
      network: NETWORK,
      ...(this.#options.nodeRegistry !== undefined ? { nodeRegistry: this.#options.nodeRegistry } : {}),
    });
    let outcome: WriteOutcome = 'unchanged';
    if (existing?.Spec) {
      if (drifted(existing.Spec, spec)) {
        await this.volumes.prepare(job, group);
        await this.#engine.getService(existing.ID).update({ version: existing.Version?.Index, ...spec });
        outcome = 'updated';
      }
    } else {
      await this.volumes.prepare(job, group);
      await this.#engine.createService(spec);
      outcome = 'created';
    }
    return { outcome, service: name };
  }

  /**
   * The service that runs `group` as `job` has it: the one labelled with the group's version hash. A
   * group with a static host port has one service, updated in place (stop-first): two services could
   * not both publish that port on a node.
   */
  async currentService(job: JobSpec, group: JobSpec['taskGroups'][number]): Promise<EngineService | undefined> {
    const services = await this.groupServices(job.id, group.name);
    if (containerPorts(group).some((port) => port.static !== undefined)) return services[0];
    return services.find((s) => s.Spec?.Labels?.[SwarmLabel.version] === groupVersionHash(job, group));
  }

  async groupServices(jobId: string, group: string): Promise<EngineService[]> {
    const services = (await this.#engine.listServices({
      filters: { label: [`${SwarmLabel.job}=${jobId}`, `${SwarmLabel.group}=${group}`] },
    })) as EngineService[];
    return services.filter((s) => s.Spec?.Labels?.[SwarmLabel.managedBy] === MANAGED_BY);
  }

  /** The group's secrets (rendered files and the app's secret files), written where absent. */
  async secretsFor(job: JobSpec, group: JobSpec['taskGroups'][number]) {
    const secrets = [];
    for (const secret of groupSecrets(group, this.#appSecrets(job.app))) {
      const name = secretName(job.id, group.name, secret.key, secret.content);
      secrets.push({ ...secret, name, id: await this.#secret(job, name, secret.key, secret.content) });
    }
    return secrets;
  }

  /** The id of the secret `name`, created with `content` when absent. */
  async #secret(job: JobSpec, name: string, key: string, content: string): Promise<string> {
    const found = (await this.#engine.listSecrets({ filters: { name: [name] } })).find((s) => s.Spec?.Name === name);
    if (found?.ID) return found.ID;
    const created = (await this.#engine.createSecret({
      Name: name,
      Labels: { [SwarmLabel.managedBy]: MANAGED_BY, [SwarmLabel.job]: job.id, [SwarmLabel.secretOf]: key },
      Data: Buffer.from(content).toString('base64'),
    })) as { id?: string; ID?: string };
    return created.id ?? created.ID ?? (await this.#secret(job, name, key, content));
  }

  /** The names of the secrets a job's services reference now. */
  async secretsInUse(jobId: string): Promise<Set<string>> {
    const services = (await this.#engine.listServices({ filters: MANAGED })) as EngineService[];
    return new Set(
      services
        .filter((s) => s.Spec?.Labels?.[SwarmLabel.job] === jobId)
        .flatMap((s) => {
          return (containerOf(s.Spec)?.Secrets ?? []).map((r) => r.SecretName ?? '');
        }),
    );
  }

  /** Removes a job's secrets other than `keep` (a secret still used by a stopping task is left for the next pass). */
  async removeSecrets(jobId: string, keep: Set<string>): Promise<void> {
    const secrets = await this.#engine.listSecrets({ filters: { label: [`${SwarmLabel.job}=${jobId}`] } });
    for (const secret of secrets)
      if (secret.ID && !keep.has(secret.Spec?.Name ?? ''))
        await this.#engine
          .getSecret(secret.ID)
          .remove()
          .catch(() => undefined);
  }

  async removeServices(which: (service: EngineService) => boolean): Promise<number> {
    const services = (await this.#engine.listServices({ filters: MANAGED })) as EngineService[];
    let removed = 0;
    for (const service of services.filter(which)) {
      await this.#engine.getService(service.ID).remove();
      removed++;
    }
    return removed;
  }

  /**
   * The overlay network every task joins: a task's host-mode ports are served through its network,
   * and tasks on different nodes reach each other on it.
   */
  async ensureNetwork(): Promise<void> {
    const found = await this.#engine.listNetworks({ filters: { name: [NETWORK] } });
    if (found.some((n) => n.Name === NETWORK)) return;
    await this.#engine.createNetwork({
      Name: NETWORK,
      Driver: 'overlay',
      Attachable: true,
      Labels: { [SwarmLabel.managedBy]: MANAGED_BY },
    });
  }

  #appSecrets(app: string): Record<string, string> {
    const dir = this.#options.appSecretsDir === undefined ? undefined : path.join(this.#options.appSecretsDir, app);
    if (dir === undefined) return {};
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch {
      return {};
    }
    const secrets: Record<string, string> = {};
    for (const name of names.filter((n) => !n.startsWith('.'))) {
      const file = path.join(dir, name);
      if (fs.lstatSync(file).isFile()) secrets[name] = fs.readFileSync(file, 'utf8');
    }
    return secrets;
  }
}
