/**
 * The swarm driver's job records: each submitted job's spec, version and state, kept in
 * `<dataDir>/swarm-jobs.json` (mode 0600, written atomically). A job's spec holds the app's
 * environment, so it is kept by the platform and never written to the engine; the engine's services
 * carry only labels that find them again.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { JobSpec, JobStatus } from '../../domain/scheduler/index.js';
import { writeFileAtomic } from '../files/write-file-atomic.js';

/** One job as the driver keeps it. */
export interface SwarmJobRecord {
  readonly spec: JobSpec;
  readonly version: number;
  readonly status: 'running' | 'dead';
  readonly submittedAt: string;
  /** Replicas set by `scale` since the submission, by group. */
  readonly scaled: Readonly<Record<string, number>>;
  /** Periodic jobs: launches paused. */
  readonly paused?: boolean;
}

interface RecordsFile {
  readonly formatVersion: 1;
  readonly jobs: Record<string, SwarmJobRecord>;
}

/** Reads and writes the job records. */
export class JobRecords {
  readonly #file: string;
  readonly #jobs: Map<string, SwarmJobRecord>;

  constructor(dataDir: string) {
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    this.#file = path.join(dataDir, 'swarm-jobs.json');
    let stored: RecordsFile = { formatVersion: 1, jobs: {} };
    try {
      stored = JSON.parse(fs.readFileSync(this.#file, 'utf8')) as RecordsFile;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (stored.formatVersion !== 1)
      throw new Error(
        `swarm job records ${this.#file}: format version ${String(stored.formatVersion)} is not supported`,
      );
    this.#jobs = new Map(Object.entries(stored.jobs));
  }

  get(jobId: string): SwarmJobRecord | undefined {
    return this.#jobs.get(jobId);
  }

  all(): SwarmJobRecord[] {
    return [...this.#jobs.values()];
  }

  /** Stores `record` (durable when this returns). */
  put(record: SwarmJobRecord): void {
    this.#jobs.set(record.spec.id, record);
    this.#save();
  }

  /** Forgets a job (durable when this returns). */
  delete(jobId: string): void {
    if (this.#jobs.delete(jobId)) this.#save();
  }

  #save(): void {
    const file: RecordsFile = { formatVersion: 1, jobs: Object.fromEntries(this.#jobs) };
    writeFileAtomic(this.#file, JSON.stringify(file), 0o600);
  }
}

/** A record as the scheduler port reports it, with a periodic job's next launch. */
export function statusOf(record: SwarmJobRecord, nextLaunchAt: string | undefined): JobStatus {
  return {
    spec: record.spec,
    version: record.version,
    status: record.status,
    paused: record.paused ?? false,
    awaitingPromotion: [],
    submittedAt: record.submittedAt,
    ...(nextLaunchAt !== undefined ? { nextLaunchAt } : {}),
  };
}
