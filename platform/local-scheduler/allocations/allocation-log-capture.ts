/**
 * The capture of allocations' output (docs/adr/0165): each allocation's stdout and stderr files
 * are followed while it runs and read to their end once it ended, labelled with its app, process
 * and release.
 */
import fs from 'node:fs';
import type { Logger } from 'pino';
import { isTerminalAllocation } from '../../../domain/scheduler/index.js';
import type { LogSink } from '../../../domain/logs/index.js';
import type { AllocationRecord, DriverState } from '../driver-state.js';
import { LogCapture, type CaptureTarget } from './log-capture.js';
import { allocationPaths } from '../tasks/task-environment.js';

/** Follows the output files of the driver's allocations into a log sink. */
export class AllocationLogCapture {
  readonly #capture: LogCapture;

  constructor(
    private readonly sink: LogSink,
    private readonly state: DriverState,
    logger: Logger,
  ) {
    this.#capture = new LogCapture({ sink, logger });
  }

  /** Follows the output of every allocation that runs, and reads those that ended to their end (driver start). */
  resume(records: readonly AllocationRecord[]): void {
    for (const record of records) {
      if (!isTerminalAllocation(record.status)) {
        this.follow(record);
        continue;
      }
      const paths = allocationPaths(record.dir);
      const behind = (['stdout', 'stderr'] as const).some((stream) => {
        const size = fileSize(stream === 'stdout' ? paths.stdout : paths.stderr);
        return size > (this.sink.offsetOf(record.id, stream) ?? 0);
      });
      if (behind) this.follow(record);
    }
  }

  /** Reads (what is left of) an allocation's output while it runs; leaves it once ended and read. */
  follow(record: AllocationRecord): void {
    const capture = this.#capture;
    if (!capture.following(record.id)) {
      if (isTerminalAllocation(record.status) && record.task.startedAt === undefined) return; // never ran
      capture.follow(this.#target(record));
    } else capture.touch(record.id, record.task.pid === undefined);
    if (isTerminalAllocation(record.status)) capture.finish(record.id);
  }

  /** Commits every line written so far. */
  async drain(): Promise<void> {
    await this.#capture.drain();
  }

  close(): void {
    this.#capture.close();
  }

  #target(record: AllocationRecord): CaptureTarget {
    const job = this.state.jobs[record.jobId];
    const commit = job && job.version === record.jobVersion ? job.spec.meta?.['svc.commit'] : undefined;
    const paths = allocationPaths(record.dir);
    return {
      allocation: record.id,
      app: record.app,
      process: job?.spec.meta?.['svc.process'] ?? record.taskGroup,
      release: commit !== undefined ? commit.slice(0, 12) : `v${record.jobVersion}`,
      files: { stdout: paths.stdout, stderr: paths.stderr },
    };
  }
}

function fileSize(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}
