/**
 * On-demand functions: an invocation dispatches one execution of an app's function process (the
 * parameterized batch job the app controller submitted from the deployed release) with the request
 * in its environment, and records it in control.db from `running` to `succeeded`, `failed` or
 * `timed_out`. The record is completed from the scheduler's allocation changes, and re-checked
 * against the scheduler whenever history is read (covering executions that ended while the API was
 * down). See docs/adr/0100-functions.md.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { NotFoundError, PayloadTooLargeError, TimeoutError } from '../../domain/errors.js';
import {
  isTerminalAllocation,
  type AllocationChange,
  type Execution,
  type Scheduler,
  type Unsubscribe,
} from '../../domain/scheduler/index.js';
import type { CanonicalAppSpec } from '../../domain/spec/index.js';
import type { Db } from '../../store/database.js';
import { getApp } from '../../store/control/apps.js';
import {
  completeFunctionExecution,
  deleteFunctionExecution,
  getFunctionExecution,
  insertFunctionExecution,
  listFunctionExecutions,
  listRunningFunctionExecutions,
  markFunctionExecutionPlaced,
  pruneFunctionExecutions,
  type FunctionExecutionRecord,
  type FunctionExecutionResult,
} from '../../store/control/function-executions.js';
import type { SchedulerTargets } from '../apps/scheduler-targets.js';
import { functionJobOf, functionProcesses, functionProcessOf } from './function-target.js';

/** The variables an invocation adds to the function's environment. */
export const FunctionRequestVariable = {
  body: 'SVC_REQUEST_BODY',
  method: 'SVC_REQUEST_METHOD',
  path: 'SVC_REQUEST_PATH',
} as const;

/**
 * Largest `SVC_REQUEST_BODY` in bytes: Linux refuses to start a program with one environment string
 * (`NAME=value` and its NUL) longer than 32 pages (128 KiB with 4 KiB pages).
 */
export const FUNCTION_BODY_LIMIT_BYTES = 128 * 1024 - `${FunctionRequestVariable.body}=`.length - 1;

/** Time a waiting caller allows beyond the function's own timeout (drain, kill, bookkeeping). */
const WAIT_MARGIN_MS = 10_000;

/** Options of {@link FunctionService}. */
export interface FunctionServiceOptions {
  readonly db: Db;
  readonly targets: SchedulerTargets;
  readonly logger: Logger;
  /** Finished executions kept per app; older ones are deleted. @default 1000 */
  readonly historyPerApp?: number;
  /** Bytes of standard output (and of standard error) stored per execution; the tail is kept. @default 64 KiB */
  readonly storedOutputBytes?: number;
}

/** What to run: a named function process (process form) or the app's only one (legacy form). */
export interface InvokeRequest {
  /** The function process; omitted, the app must have exactly one. */
  readonly process?: string;
  /** The function's input, delivered as JSON text in `SVC_REQUEST_BODY`. */
  readonly body: unknown;
  /** Delivered as `SVC_REQUEST_PATH`. */
  readonly path: string;
}

/** A started invocation. */
export interface Invocation {
  readonly executionId: string;
  readonly jobId: string;
  readonly app: string;
  readonly process: string;
  readonly region: string;
  readonly status: 'running';
  readonly startedAt: string;
  /** The function's run limit (its `function.timeout`, default 30 s). */
  readonly timeoutMs: number;
}

/** A finished execution with the scheduler's full output (the stored record may hold only its tail). */
export interface FunctionResult {
  readonly record: FunctionExecutionRecord;
  readonly output: string;
}

/** Filter and page of {@link FunctionService.history}. */
export interface HistoryQuery {
  readonly limit: number;
  readonly process?: string;
  readonly executionId?: string;
}

function tail(text: string, limitBytes: number): { text: string; truncated: boolean } {
  const buffer = Buffer.from(text, 'utf8');
  if (buffer.length <= limitBytes) return { text, truncated: false };
  // Cutting may split a character; the decoder replaces the partial one.
  return { text: buffer.subarray(buffer.length - limitBytes).toString('utf8'), truncated: true };
}

/** Invokes function processes and keeps their execution history. */
export class FunctionService {
  readonly #db: Db;
  readonly #targets: SchedulerTargets;
  readonly #log: Logger;
  readonly #keep: number;
  readonly #outputBytes: number;
  readonly #watches = new Map<Scheduler, Unsubscribe>();
  /** Executions between their record and the scheduler's answer to the dispatch. */
  readonly #dispatching = new Set<string>();
  /** Emits `<executionId>` with the scheduler's execution once its record is completed. */
  readonly #settled = new EventEmitter();
  #closed = false;

  constructor(options: FunctionServiceOptions) {
    this.#db = options.db;
    this.#targets = options.targets;
    this.#log = options.logger;
    this.#keep = options.historyPerApp ?? 1000;
    this.#outputBytes = options.storedOutputBytes ?? 64 * 1024;
    this.#settled.setMaxListeners(0);
  }

  #spec(app: string): CanonicalAppSpec {
    const spec = getApp(this.#db, app)?.spec;
    if (!spec)
      throw new NotFoundError(`app "${app}" is not discovered or has no valid spec`, {
        code: 'app_not_found',
        details: { app },
      });
    return spec;
  }

  /** Starts one execution of a function process; resolves once the scheduler placed it. */
  async invoke(app: string, request: InvokeRequest): Promise<Invocation> {
    const spec = this.#spec(app);
    const process = functionProcessOf(app, spec, request.process);
    const body = JSON.stringify(request.body ?? null);
    const bytes = Buffer.byteLength(body, 'utf8');
    if (bytes > FUNCTION_BODY_LIMIT_BYTES) {
      throw new PayloadTooLargeError(
        `function input is ${bytes} bytes as JSON; ${FunctionRequestVariable.body} holds at most ${FUNCTION_BODY_LIMIT_BYTES}`,
        {
          code: 'function_body_too_large',
          details: { bytes, limitBytes: FUNCTION_BODY_LIMIT_BYTES },
        },
      );
    }
    const { region, scheduler, job } = await functionJobOf(this.#targets, app, spec, process);
    const group = job.spec.taskGroups[0];
    const timeoutMs = group?.task.timeout?.milliseconds ?? 0;
    const executionId = `exec-${randomUUID()}`;
    this.#watch(scheduler);
    // Recorded before the dispatch, so the completion (an allocation change) always finds its row.
    insertFunctionExecution(this.#db, {
      executionId,
      app,
      process,
      jobId: job.spec.id,
      region,
      startedAt: new Date().toISOString(),
    });
    this.#dispatching.add(executionId);
    let execution: Execution;
    try {
      execution = await scheduler.dispatch(job.spec.id, {
        executionId,
        env: {
          [FunctionRequestVariable.body]: body,
          [FunctionRequestVariable.method]: 'POST',
          [FunctionRequestVariable.path]: request.path,
        },
      });
    } catch (error) {
      deleteFunctionExecution(this.#db, executionId);
      throw error;
    } finally {
      this.#dispatching.delete(executionId);
    }
    markFunctionExecutionPlaced(this.#db, executionId, {
      allocationId: execution.allocationId,
      startedAt: execution.startedAt,
    });
    pruneFunctionExecutions(this.#db, app, this.#keep);
    this.#log.info(
      { app, process, jobId: job.spec.id, executionId, allocationId: execution.allocationId },
      'function invoked',
    );
    // A driver may answer with a run that already ended.
    if (execution.status !== 'running') this.#complete(execution);
    return {
      executionId,
      jobId: job.spec.id,
      app,
      process,
      region,
      status: 'running',
      startedAt: execution.startedAt,
      timeoutMs,
    };
  }

  /** Waits until an execution finished (bounded by its timeout plus a margin) and returns it with its full output. */
  async result(invocation: Invocation): Promise<FunctionResult> {
    const waitMs = invocation.timeoutMs + WAIT_MARGIN_MS;
    const scheduler = await this.#targets.get(invocation.region);
    const settled = await new Promise<Execution | undefined>((resolve, reject) => {
      const listener = (execution: Execution) => finish(() => resolve(execution));
      const timer = setTimeout(
        () =>
          finish(() =>
            reject(
              new TimeoutError(
                `${invocation.app}/${invocation.process}: execution ${invocation.executionId} did not finish within ${waitMs} ms; it is still recorded in the function history`,
                {
                  code: 'function_wait_timeout',
                  details: { executionId: invocation.executionId, jobId: invocation.jobId },
                },
              ),
            ),
          ),
        waitMs,
      );
      const finish = (fn: () => void) => {
        clearTimeout(timer);
        this.#settled.off(invocation.executionId, listener);
        fn();
      };
      this.#settled.on(invocation.executionId, listener);
      if (getFunctionExecution(this.#db, invocation.executionId)?.status !== 'running')
        finish(() => resolve(undefined));
    });
    const record = getFunctionExecution(this.#db, invocation.executionId);
    if (!record)
      throw new NotFoundError(`execution ${invocation.executionId} is no longer recorded`, {
        code: 'execution_not_found',
      });
    const execution = settled ?? (await scheduler.getExecution(invocation.executionId));
    return { record, output: execution?.output ?? record.output };
  }

  /** Executions of an app, newest first, after re-checking the ones still recorded as running. */
  async history(
    app: string,
    query: HistoryQuery,
  ): Promise<{ app: string; functions: string[]; executions: FunctionExecutionRecord[] }> {
    const spec = this.#spec(app);
    await this.#sync(app);
    return {
      app,
      functions: functionProcesses(spec),
      executions: listFunctionExecutions(this.#db, {
        app,
        limit: query.limit,
        ...(query.process !== undefined ? { process: query.process } : {}),
        ...(query.executionId !== undefined ? { executionId: query.executionId } : {}),
      }),
    };
  }

  /** Stops watching the schedulers; pending completions are dropped (history reads catch up). */
  close(): void {
    this.#closed = true;
    for (const unsubscribe of this.#watches.values()) unsubscribe();
    this.#watches.clear();
    this.#settled.removeAllListeners();
  }

  async #sync(app: string): Promise<void> {
    for (const row of listRunningFunctionExecutions(this.#db, app)) {
      if (this.#dispatching.has(row.executionId)) continue;
      let scheduler: Scheduler;
      try {
        scheduler = await this.#targets.get(row.region);
      } catch (error) {
        // The record stays running until its region's scheduler opens again.
        this.#log.warn(
          { err: error, executionId: row.executionId, region: row.region },
          'function execution not re-checked: scheduler unavailable',
        );
        continue;
      }
      this.#watch(scheduler);
      await this.#settle(scheduler, row.executionId);
    }
  }

  #watch(scheduler: Scheduler): void {
    if (this.#closed || this.#watches.has(scheduler)) return;
    this.#watches.set(
      scheduler,
      scheduler.watch((change) => this.#onChange(scheduler, change)),
    );
  }

  #onChange(scheduler: Scheduler, change: AllocationChange): void {
    const allocation = change.allocation;
    if (
      allocation.kind !== 'dispatch' ||
      allocation.executionId === undefined ||
      !isTerminalAllocation(allocation.status)
    )
      return;
    void this.#settle(scheduler, allocation.executionId);
  }

  /** Completes the record of an execution the scheduler reports finished (or no longer knows). */
  async #settle(scheduler: Scheduler, executionId: string): Promise<void> {
    try {
      if (this.#closed || getFunctionExecution(this.#db, executionId)?.status !== 'running') return;
      const execution = await scheduler.getExecution(executionId);
      if (this.#closed) return;
      if (execution === undefined) {
        if (this.#dispatching.has(executionId)) return;
        const now = new Date().toISOString();
        this.#record(
          executionId,
          {
            status: 'failed',
            exitCode: null,
            output: '',
            errorOutput:
              'the scheduler no longer knows this execution (its job was stopped or removed before the run was recorded)',
            outputTruncated: false,
            durationMs: null,
            finishedAt: now,
          },
          undefined,
        );
        return;
      }
      if (execution.status !== 'running') this.#complete(execution);
    } catch (error) {
      this.#log.warn({ err: error, executionId }, 'function execution not completed; the next history read retries');
    }
  }

  #complete(execution: Execution): void {
    if (execution.status === 'running') return;
    const output = tail(execution.output, this.#outputBytes);
    const errorOutput = tail(execution.errorOutput, this.#outputBytes);
    this.#record(
      execution.id,
      {
        status: execution.status,
        exitCode: execution.exitCode,
        output: output.text,
        errorOutput: errorOutput.text,
        outputTruncated: output.truncated || errorOutput.truncated,
        durationMs: execution.durationMs,
        finishedAt: execution.finishedAt ?? new Date().toISOString(),
      },
      execution,
    );
  }

  #record(executionId: string, result: FunctionExecutionResult, execution: Execution | undefined): void {
    if (!completeFunctionExecution(this.#db, executionId, result)) return;
    this.#log.info(
      { executionId, status: result.status, exitCode: result.exitCode, durationMs: result.durationMs },
      'function execution finished',
    );
    this.#settled.emit(executionId, execution);
  }
}
