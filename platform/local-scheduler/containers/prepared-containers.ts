/**
 * Containers created ahead of their start (ADR 0228). A `podman run` creates the container (its
 * storage layer, its configuration) and then starts it; the first half can be done before anyone
 * waits. The driver prepares the next allocation of a service group whose task names an image when
 * the group is scaled to zero (the wake then only starts it), and before it stops an allocation that
 * cannot overlap its replacement (a fixed host port): the gap is then the start alone.
 *
 * A prepared container belongs to an allocation id, folder and ports chosen at preparation, which
 * the allocation takes when it is placed. Its start runs it only when the `podman run` it replaces
 * would have been made from exactly the same arguments and environment (a digest kept in memory);
 * otherwise that `podman run --replace` replaces it. A driver that closes removes what it prepared;
 * one that crashed leaves containers never started, which the next driver removes when it opens.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import {
  filesFingerprint,
  rollFingerprint,
  type AllocatedPort,
  type TaskGroupSpec,
} from '../../../domain/scheduler/index.js';
import type { AllocationRecord, JobRecord } from '../driver-state.js';
import { prepareContainerCreate, type LaunchContext } from '../tasks/task-launch.js';
import { removeContainer } from './container-exit.js';
import { PREPARED_BY_LABEL, PREPARED_LABEL, type ContainerRuntime } from './container-runtime.js';

/** What the prepared containers need from their driver. */
export interface PreparedContainersContext {
  readonly runtime: ContainerRuntime;
  readonly launch: LaunchContext;
  readonly logger: Logger;
  /** Makes the app's user if it is missing (its allocations run as it). */
  prepareIdentity(app: string, user: string | undefined): Promise<void>;
  /** The folder of allocation `id`. */
  allocationDir(id: string): string;
  /** Picks the ports of a new allocation of `group` (static ones as given). */
  pickPorts(group: TaskGroupSpec): Promise<AllocatedPort[]>;
  /** The record allocation `id` of `group` would have if placed now with `ports`. */
  newRecord(job: JobRecord, group: TaskGroupSpec, index: number, id: string, ports: AllocatedPort[]): AllocationRecord;
}

/** One container created ahead, for the next allocation of one group. */
interface Prepared {
  readonly id: string;
  readonly jobId: string;
  readonly group: string;
  readonly index: number;
  readonly fingerprint: string;
  readonly filesFingerprint: string;
  readonly ports: AllocatedPort[];
  readonly dir: string;
  /** Resolves with the digest of the `podman create` once it succeeded, undefined if it failed. */
  readonly created: Promise<string | undefined>;
  digest?: string;
}

/** What a placement takes from a prepared container: its id and ports. */
export interface PreparedPlacement {
  readonly id: string;
  readonly ports: AllocatedPort[];
}

const key = (jobId: string, group: string): string => `${jobId}\u0000${group}`;

/** The driver's containers created ahead of their start. */
export class PreparedContainers {
  readonly #ctx: PreparedContainersContext;
  /** The one prepared container per group, by job and group. */
  readonly #byGroup = new Map<string, Prepared>();
  /** Prepared containers taken by a placement, until its launch claims them. */
  readonly #taken = new Map<string, Prepared>();
  /** Creations and removals under way (awaited by {@link close}). */
  readonly #pending = new Set<Promise<unknown>>();
  #closed = false;

  constructor(ctx: PreparedContainersContext) {
    this.#ctx = ctx;
  }

  /** Ports held by prepared containers: no other allocation is given them. */
  reservedPorts(): number[] {
    return [...this.#byGroup.values(), ...this.#taken.values()].flatMap((p) => p.ports.map((port) => port.value));
  }

  /**
   * Creates (does not start) the container of the next allocation of `group` at `index`, unless one
   * for its current version is prepared or being prepared; replaces one of an earlier version.
   * Resolves once it exists (or failed: then the start runs as usual, and the failure is logged).
   */
  prepare(job: JobRecord, group: TaskGroupSpec, index: number): Promise<void> {
    return this.#track(this.#prepare(job, group, index));
  }

  async #prepare(job: JobRecord, group: TaskGroupSpec, index: number): Promise<void> {
    if (this.#closed) return;
    const k = key(job.spec.id, group.name);
    const fingerprint = rollFingerprint(job.spec, group);
    const files = filesFingerprint(group);
    const existing = this.#byGroup.get(k);
    if (
      existing &&
      existing.fingerprint === fingerprint &&
      existing.filesFingerprint === files &&
      existing.index === index
    ) {
      await existing.created;
      return;
    }
    if (existing) this.#discard(existing);
    await this.#ctx.prepareIdentity(job.spec.app, group.task.user).catch(() => undefined);
    const id = randomUUID();
    const ports = await this.#ctx.pickPorts(group);
    if (this.#closed || this.#byGroup.has(k)) return;
    const record = this.#ctx.newRecord(job, group, index, id, ports);
    const entry: Prepared = {
      id,
      jobId: job.spec.id,
      group: group.name,
      index,
      fingerprint,
      filesFingerprint: files,
      ports,
      dir: record.dir,
      created: this.#create(record),
    };
    this.#byGroup.set(k, entry);
    entry.digest = await entry.created;
    if (entry.digest === undefined && this.#byGroup.get(k) === entry) this.#discard(entry);
  }

  /**
   * The prepared container for a new allocation of `group` at `index`, if one of the group's current
   * version is ready: the placement uses its id and ports. Any other prepared for the group stays.
   */
  take(job: JobRecord, group: TaskGroupSpec, index: number): PreparedPlacement | undefined {
    const k = key(job.spec.id, group.name);
    const entry = this.#byGroup.get(k);
    if (
      !entry ||
      entry.digest === undefined ||
      entry.index !== index ||
      entry.fingerprint !== rollFingerprint(job.spec, group) ||
      entry.filesFingerprint !== filesFingerprint(group) ||
      group.ports.some((p, i) => p.static !== undefined && p.static !== entry.ports[i]?.value)
    )
      return undefined;
    this.#byGroup.delete(k);
    this.#taken.set(entry.id, entry);
    return { id: entry.id, ports: entry.ports };
  }

  /**
   * True once for allocation `id` when its prepared container was created from exactly `digest`:
   * its launch starts it. False otherwise (the launch's `podman run --replace` then replaces it).
   */
  claim(id: string, digest: string): boolean {
    const entry = this.#taken.get(id);
    this.#taken.delete(id);
    return entry !== undefined && entry.digest === digest;
  }

  /** Removes what was prepared for `jobId` (the job stopped). */
  discardJob(jobId: string): void {
    for (const entry of this.#byGroup.values()) if (entry.jobId === jobId) this.#discard(entry);
  }

  /**
   * Removes containers a previous driver on this data folder prepared and never started (it
   * crashed, or was killed), with their folders, except those of `known` allocations; containers
   * another platform of the host prepared are left alone. Returns how many.
   */
  async sweep(known: ReadonlySet<string>): Promise<number> {
    const listed = await this.#ctx.runtime.podman.run([
      'ps',
      '--all',
      '--filter',
      `label=${PREPARED_LABEL}=true`,
      '--filter',
      `label=${PREPARED_BY_LABEL}=${path.dirname(this.#ctx.allocationDir('-'))}`,
      '--filter',
      'status=created',
      '--format',
      '{{index .Labels "io.svc.allocation"}}',
    ]);
    if (!listed.ok) return 0;
    const ids = listed.stdout
      .split('\n')
      .map((line) => line.trim())
      .filter((id) => id !== '' && !known.has(id));
    await Promise.all(
      ids.map(async (id) => {
        await removeContainer(this.#ctx.runtime, id);
        fs.rmSync(this.#ctx.allocationDir(id), { recursive: true, force: true });
      }),
    );
    return ids.length;
  }

  /** Resolves once no container is being prepared or removed. */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }

  /** Removes every container prepared and not taken, once preparations under way end. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.settled();
    for (const entry of [...this.#byGroup.values()]) this.#discard(entry);
    await this.settled();
  }

  async #create(record: AllocationRecord): Promise<string | undefined> {
    const started = performance.now();
    try {
      const argv = prepareContainerCreate(record, this.#ctx.launch, this.#ctx.runtime);
      const result = await this.#ctx.runtime.podman.run(argv.args.slice(this.#ctx.runtime.podman.globalArgs().length), {
        env: argv.env,
      });
      if (!result.ok)
        throw new Error(`podman create exited ${String(result.code)}: ${result.stderr.trim().slice(-500)}`);
      this.#ctx.logger.debug(
        {
          app: record.app,
          group: record.taskGroup,
          allocationId: record.id,
          ms: Math.round(performance.now() - started),
        },
        'container prepared for the next start',
      );
      return argv.digest;
    } catch (error) {
      this.#ctx.logger.warn(
        { app: record.app, group: record.taskGroup, err: error },
        'container not prepared ahead: its start will create it',
      );
      return undefined;
    }
  }

  #discard(entry: Prepared): void {
    const k = key(entry.jobId, entry.group);
    if (this.#byGroup.get(k) === entry) this.#byGroup.delete(k);
    void this.#track(
      entry.created
        .then(async () => {
          await removeContainer(this.#ctx.runtime, entry.id);
          fs.rmSync(entry.dir, { recursive: true, force: true });
        })
        .catch((error: unknown) =>
          this.#ctx.logger.warn({ allocationId: entry.id, err: error }, 'prepared container not removed'),
        ),
    );
  }

  #track(promise: Promise<void>): Promise<void> {
    const tracked: Promise<void> = promise
      .catch((error: unknown) => this.#ctx.logger.warn({ err: error }, 'container not prepared ahead'))
      .finally(() => this.#pending.delete(tracked));
    this.#pending.add(tracked);
    return tracked;
  }
}
