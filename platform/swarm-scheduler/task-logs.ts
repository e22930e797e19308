/**
 * The capture of tasks' output on the swarm driver: each task's stdout and stderr are followed
 * through the manager's task log endpoint (`GET /tasks/<id>/logs`, which reaches the task on any
 * node), split into lines and delivered to the platform's log store labelled with the app, process
 * and release, as the local driver's capture does (ADR 0165). A stream's offset is the count of its
 * lines stored: a driver that opens again reads a task's log from its start and skips those.
 */
import { PassThrough } from 'node:stream';
import type Docker from 'dockerode';
import type { Logger } from 'pino';
import { MAX_LOG_LINE_CHARS, type CapturedLine, type LogSink, type LogStream } from '../../domain/logs/index.js';
import type { Allocation } from '../../domain/scheduler/index.js';

/** How a task's lines are labelled. */
export interface TaskLogLabels {
  readonly process: string;
  readonly release: string;
}

/** Follows tasks' output into a log sink. */
export class TaskLogs {
  readonly #following = new Map<string, NodeJS.ReadableStream>();
  #closed = false;

  constructor(
    private readonly engine: Docker,
    private readonly sink: LogSink,
    private readonly logger: Logger,
  ) {}

  /** Follows the output of a task that started, once. */
  follow(allocation: Allocation, labels: TaskLogLabels): void {
    if (this.#closed || this.#following.has(allocation.id)) return;
    if (allocation.task.startedAt === undefined && allocation.status !== 'running') return;
    const task = this.engine.getTask(allocation.id) as Docker.Task & {
      logs(options: Record<string, unknown>): Promise<NodeJS.ReadableStream>;
    };
    const placeholder = new PassThrough();
    this.#following.set(allocation.id, placeholder);
    task
      .logs({ follow: true, stdout: true, stderr: true, timestamps: false })
      .then((stream) => {
        if (this.#closed) {
          (stream as unknown as { destroy(): void }).destroy();
          return;
        }
        this.#following.set(allocation.id, stream);
        this.#read(allocation, labels, stream);
      })
      .catch((error: unknown) => {
        this.#following.delete(allocation.id);
        this.logger.warn({ err: error, allocation: allocation.id }, 'swarm task log not followed');
      });
  }

  /** Stops following every task. */
  close(): void {
    this.#closed = true;
    for (const stream of this.#following.values()) (stream as unknown as { destroy(): void }).destroy();
    this.#following.clear();
  }

  #read(allocation: Allocation, labels: TaskLogLabels, stream: NodeJS.ReadableStream): void {
    const outputs = { stdout: new PassThrough(), stderr: new PassThrough() };
    this.engine.modem.demuxStream(stream, outputs.stdout, outputs.stderr);
    for (const name of ['stdout', 'stderr'] as const) {
      let skip = this.sink.offsetOf(allocation.id, name) ?? 0;
      let count = skip;
      let rest = '';
      outputs[name].setEncoding('utf8');
      outputs[name].on('data', (chunk: string) => {
        const parts = (rest + chunk).split('\n');
        rest = parts.pop() ?? '';
        const lines: CapturedLine[] = [];
        for (const text of parts) {
          if (skip > 0) {
            skip--;
            continue;
          }
          count++;
          for (let at = 0; at < Math.max(text.length, 1); at += MAX_LOG_LINE_CHARS)
            lines.push(this.#line(allocation, labels, name, text.slice(at, at + MAX_LOG_LINE_CHARS)));
        }
        if (lines.length > 0) this.sink.append(lines, [{ allocation: allocation.id, stream: name, offset: count }]);
      });
    }
    stream.on('end', () => this.#following.delete(allocation.id));
    stream.on('error', () => this.#following.delete(allocation.id));
  }

  #line(allocation: Allocation, labels: TaskLogLabels, stream: LogStream, line: string): CapturedLine {
    return {
      at: Date.now(),
      app: allocation.app,
      process: labels.process,
      allocation: allocation.id,
      release: labels.release,
      stream,
      line: line.replace(/\r$/, ''),
    };
  }
}
