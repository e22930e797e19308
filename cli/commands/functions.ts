/**
 * `svc invoke <app>` and `svc functions history <app>`: run an app's function process on demand
 * (the process form of POST /api/apps/{id}/invoke) and read its execution history.
 */
import type { Command } from 'commander';
import { CliError, ExitCode } from '../cli-error.js';
import { apiGet, apiPost, type ApiClientOptions } from '../api-client.js';
import { renderTable } from '../table.js';
import type {
  FunctionExecutionRecord as ExecutionView,
  FunctionHistory as HistoryView,
} from '../../openapi/control-plane.types.js';

interface InvocationView {
  executionId: string;
  jobId: string;
  process: string;
  status: string;
}

interface InvokeOptions {
  api?: string;
  process?: string;
  body?: string;
  wait: boolean;
  json?: boolean;
  idempotencyKey?: string;
}

const historyPath = (app: string, query: Record<string, string>) =>
  `/api/apps/${encodeURIComponent(app)}/function/history?${new URLSearchParams(query).toString()}`;

/** Polls the history until the execution is no longer running. */
async function waitForExecution(
  app: string,
  executionId: string,
  options: ApiClientOptions,
  intervalMs = 250,
): Promise<ExecutionView> {
  for (;;) {
    const [record] = (await apiGet<HistoryView>(historyPath(app, { execution: executionId, limit: '1' }), options))
      .executions;
    if (record && record.status !== 'running') return record;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

async function invoke(app: string, opts: InvokeOptions): Promise<void> {
  const api: ApiClientOptions = opts.api ? { api: opts.api } : {};
  let body: unknown = null;
  if (opts.body !== undefined) {
    try {
      body = JSON.parse(opts.body);
    } catch (error) {
      throw new CliError(`--body is not JSON: ${(error as Error).message}`, ExitCode.usage);
    }
  }
  let process_ = opts.process;
  if (process_ === undefined) {
    const { functions } = await apiGet<HistoryView>(historyPath(app, { limit: '1' }), api);
    if (functions.length === 0) throw new CliError(`${app} has no function process`, ExitCode.notFound);
    if (functions.length > 1)
      throw new CliError(
        `${app} has several function processes (${functions.join(', ')}); name one with --process`,
        ExitCode.usage,
      );
    process_ = functions[0]!;
  }
  const invocation = await apiPost<InvocationView>(
    `/api/apps/${encodeURIComponent(app)}/invoke`,
    { process: process_, body },
    { ...api, ...(opts.idempotencyKey ? { idempotencyKey: opts.idempotencyKey } : {}) },
  );
  if (!opts.wait) {
    process.stdout.write(
      opts.json
        ? JSON.stringify(invocation, null, 2) + '\n'
        : `execution ${invocation.executionId} of ${app}/${invocation.process} (job ${invocation.jobId}) is running\n`,
    );
    return;
  }
  const record = await waitForExecution(app, invocation.executionId, api);
  if (opts.json) process.stdout.write(JSON.stringify(record, null, 2) + '\n');
  else {
    process.stdout.write(record.output);
    if (record.errorOutput) process.stderr.write(record.errorOutput);
  }
  if (record.status !== 'succeeded') {
    throw new CliError(
      `function ${app}/${record.process} ${record.status}${record.exitCode === null ? '' : ` (exit code ${record.exitCode})`}, execution ${record.executionId}`,
      ExitCode.failed,
    );
  }
}

/** Registers `invoke` and `functions history`. */
export function registerFunctions(program: Command): void {
  program
    .command('invoke <app>')
    .description(
      "Run an app's function process once (POST /api/apps/{id}/invoke), wait for it and print its standard output; exit 1 unless it succeeded",
    )
    .option('--process <name>', "the function process (default: the app's only one)")
    .option('--body <json>', 'the function input as JSON, delivered in SVC_REQUEST_BODY (default null)')
    .option('--no-wait', 'print the execution id and return without waiting')
    .option('--json', 'print the execution record (or, with --no-wait, the invocation) as JSON')
    .option(
      '--idempotency-key <key>',
      'Idempotency-Key header: a retry with the same key answers the original invocation',
    )
    .option('--api <url>', 'control plane URL (default SVC_API_URL or http://127.0.0.1:$SVC_PORT)')
    .action((app: string, opts: InvokeOptions) => invoke(app, opts));
  const functions = program.command('functions').description('On-demand function processes');
  functions
    .command('history <app>')
    .description('Function executions of an app, newest first (GET /api/apps/{id}/function/history)')
    .option('--process <name>', 'only this function process')
    .option('--limit <n>', 'records to show (at most 100)', '20')
    .option('--json', 'print the API answer as JSON')
    .option('--api <url>', 'control plane URL (default SVC_API_URL or http://127.0.0.1:$SVC_PORT)')
    .action(async (app: string, opts: { process?: string; limit: string; json?: boolean; api?: string }) => {
      const view = await apiGet<HistoryView>(
        historyPath(app, { limit: opts.limit, ...(opts.process ? { process: opts.process } : {}) }),
        opts.api ? { api: opts.api } : {},
      );
      if (opts.json) return void process.stdout.write(JSON.stringify(view, null, 2) + '\n');
      const firstLine = (text: string) => {
        const line = text.trim().split('\n')[0] ?? '';
        return line.length > 60 ? `${line.slice(0, 57)}...` : line;
      };
      const rows = view.executions.map((e) => [
        e.executionId,
        e.process,
        e.status,
        e.exitCode === null ? '-' : String(e.exitCode),
        e.durationMs === null ? '-' : `${e.durationMs}ms`,
        e.startedAt,
        firstLine(e.output) || '-',
      ]);
      process.stdout.write(
        renderTable(['EXECUTION', 'PROCESS', 'STATUS', 'EXIT', 'DURATION', 'STARTED', 'OUTPUT'], rows),
      );
    });
}
