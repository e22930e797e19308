/**
 * Function executions: the durable record of each on-demand invocation of a function process, from
 * `running` to `succeeded`, `failed` or `timed_out`. Newest first is insertion order (`seq`).
 */
import type { ExecutionStatus } from '../../domain/scheduler/index.js';
import type { Db } from '../database.js';

/** One invocation as recorded in control.db. */
export interface FunctionExecutionRecord {
  readonly executionId: string;
  readonly app: string;
  readonly process: string;
  readonly jobId: string;
  /** Scheduler target (region key) the execution ran on. */
  readonly region: string;
  /** Set once the scheduler placed the execution. */
  readonly allocationId: string | null;
  readonly status: ExecutionStatus;
  readonly exitCode: number | null;
  /** Standard output: the function's response. */
  readonly output: string;
  readonly errorOutput: string;
  /** True when `output` or `errorOutput` was cut to the stored limit (the tail is kept). */
  readonly outputTruncated: boolean;
  readonly durationMs: number | null;
  readonly startedAt: string;
  readonly finishedAt: string | null;
}

/** What is known when an invocation is recorded, before the scheduler runs it. */
export type NewFunctionExecution = Pick<
  FunctionExecutionRecord,
  'executionId' | 'app' | 'process' | 'jobId' | 'region' | 'startedAt'
>;

/** The outcome of a finished execution. */
export type FunctionExecutionResult = Pick<
  FunctionExecutionRecord,
  'exitCode' | 'output' | 'errorOutput' | 'outputTruncated' | 'durationMs'
> & {
  readonly status: Exclude<ExecutionStatus, 'running'>;
  readonly finishedAt: string;
};

/** Filter and page of {@link listFunctionExecutions}. */
export interface FunctionExecutionQuery {
  readonly app: string;
  readonly process?: string;
  readonly executionId?: string;
  readonly limit: number;
  /** @default 0 */
  readonly offset?: number;
}

interface Raw {
  execution_id: string;
  app: string;
  process: string;
  job_id: string;
  region: string;
  allocation_id: string | null;
  status: ExecutionStatus;
  exit_code: number | null;
  output: string;
  error_output: string;
  output_truncated: number;
  duration_ms: number | null;
  started_at: string;
  finished_at: string | null;
}

const fromRaw = (r: Raw): FunctionExecutionRecord => ({
  executionId: r.execution_id,
  app: r.app,
  process: r.process,
  jobId: r.job_id,
  region: r.region,
  allocationId: r.allocation_id,
  status: r.status,
  exitCode: r.exit_code,
  output: r.output,
  errorOutput: r.error_output,
  outputTruncated: r.output_truncated === 1,
  durationMs: r.duration_ms,
  startedAt: r.started_at,
  finishedAt: r.finished_at,
});

/** Records a new invocation as `running`. */
export function insertFunctionExecution(db: Db, input: NewFunctionExecution): void {
  db.prepare(
    `INSERT INTO function_executions (execution_id, app, process, job_id, region, status, started_at)
     VALUES (?, ?, ?, ?, ?, 'running', ?)`,
  ).run(input.executionId, input.app, input.process, input.jobId, input.region, input.startedAt);
}

/** Records where the scheduler placed an execution and when it started (it may have finished already). */
export function markFunctionExecutionPlaced(
  db: Db,
  executionId: string,
  placed: { allocationId: string; startedAt: string },
): void {
  db.prepare('UPDATE function_executions SET allocation_id = ?, started_at = ? WHERE execution_id = ?').run(
    placed.allocationId,
    placed.startedAt,
    executionId,
  );
}

/** Completes a running execution; false when it is unknown or already finished (nothing is written). */
export function completeFunctionExecution(db: Db, executionId: string, result: FunctionExecutionResult): boolean {
  return (
    db
      .prepare(
        `UPDATE function_executions SET status = ?, exit_code = ?, output = ?, error_output = ?, output_truncated = ?, duration_ms = ?, finished_at = ?
         WHERE execution_id = ? AND status = 'running'`,
      )
      .run(
        result.status,
        result.exitCode,
        result.output,
        result.errorOutput,
        result.outputTruncated ? 1 : 0,
        result.durationMs,
        result.finishedAt,
        executionId,
      ).changes > 0
  );
}

/** Forgets an invocation the scheduler refused to start. */
export function deleteFunctionExecution(db: Db, executionId: string): void {
  db.prepare('DELETE FROM function_executions WHERE execution_id = ?').run(executionId);
}

/** One execution, or undefined. */
export function getFunctionExecution(db: Db, executionId: string): FunctionExecutionRecord | undefined {
  const row = db.prepare('SELECT * FROM function_executions WHERE execution_id = ?').get(executionId) as
    Raw | undefined;
  return row ? fromRaw(row) : undefined;
}

/** Executions of an app, newest first. */
export function listFunctionExecutions(db: Db, query: FunctionExecutionQuery): FunctionExecutionRecord[] {
  const where = ['app = ?'];
  const params: unknown[] = [query.app];
  if (query.process !== undefined) {
    where.push('process = ?');
    params.push(query.process);
  }
  if (query.executionId !== undefined) {
    where.push('execution_id = ?');
    params.push(query.executionId);
  }
  params.push(query.limit, query.offset ?? 0);
  return (
    db
      .prepare(`SELECT * FROM function_executions WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT ? OFFSET ?`)
      .all(...params) as Raw[]
  ).map(fromRaw);
}

/** Executions still recorded as running, of one app or of all. */
export function listRunningFunctionExecutions(db: Db, app?: string): FunctionExecutionRecord[] {
  const rows =
    app === undefined
      ? db.prepare(`SELECT * FROM function_executions WHERE status = 'running' ORDER BY seq`).all()
      : db.prepare(`SELECT * FROM function_executions WHERE app = ? AND status = 'running' ORDER BY seq`).all(app);
  return (rows as Raw[]).map(fromRaw);
}

/** Deletes the finished executions of `app` older than its newest `keep`; returns how many. */
export function pruneFunctionExecutions(db: Db, app: string, keep: number): number {
  return db
    .prepare(
      `DELETE FROM function_executions WHERE app = ? AND status != 'running'
       AND seq <= (SELECT seq FROM function_executions WHERE app = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)`,
    )
    .run(app, app, keep).changes;
}
