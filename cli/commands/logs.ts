/**
 * `svc logs <app>`: an app's captured output (GET /api/v1/apps/{id}/logs), `-f` to follow it live
 * across redeploys. Lines are coloured by process on a terminal and plain when piped; `--json`
 * prints one JSON object a line. A client command: it imports no server module.
 */
import type { Command } from 'commander';
import { apiBaseUrl, apiGet } from '../api-client.js';
import { ApiError } from '../cli-error.js';
import type { LogLineView, LogPage } from '../../openapi/control-plane.types.js';

interface LogsOptions {
  api?: string;
  follow?: boolean;
  process?: string;
  allocation?: string;
  release?: string;
  stream?: string;
  since?: string;
  until?: string;
  grep?: string;
  limit?: string;
  json?: boolean;
}

const COLOURS = [36, 33, 35, 32, 34, 91, 96, 93];

/** Formats lines for a terminal (colour per process) or a pipe (plain). */
function printer(json: boolean, colour: boolean): (line: LogLineView) => void {
  const assigned = new Map<string, number>();
  return (line) => {
    if (json) return void process.stdout.write(JSON.stringify(line) + '\n');
    const label = `${line.process}.${line.allocation.slice(0, 8)}`;
    if (!colour) return void process.stdout.write(`${line.at} ${label} ${line.line}\n`);
    if (!assigned.has(line.process)) assigned.set(line.process, COLOURS[assigned.size % COLOURS.length]!);
    const code = assigned.get(line.process)!;
    const text = line.stream === 'stderr' ? `\x1b[31m${line.line}\x1b[0m` : line.line;
    process.stdout.write(`\x1b[2m${line.at}\x1b[0m \x1b[${code}m${label}\x1b[0m ${text}\n`);
  };
}

async function follow(path: string, opts: LogsOptions, print: (line: LogLineView) => void): Promise<void> {
  const base = apiBaseUrl(opts);
  const token = process.env.SVC_API_TOKEN;
  let response: Response;
  try {
    response = await fetch(`${base}${path}`, {
      headers: { accept: 'text/event-stream', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    });
  } catch {
    // Same words as every other command.
    await apiGet(path, opts);
    return;
  }
  if (!response.ok || response.body === null) {
    const body = (await response.json().catch(() => undefined)) as
      { error?: { code?: string; message?: string; details?: Record<string, unknown> } } | undefined;
    throw new ApiError(
      response.status,
      body?.error?.code ?? 'http_error',
      body?.error?.message ?? `${response.status} ${response.statusText}`,
      body?.error?.details ?? {},
    );
  }
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (/^event: /m.test(event)) continue; // ready
      const data = /^data: (.*)$/m.exec(event)?.[1];
      if (data !== undefined) print(JSON.parse(data) as LogLineView);
    }
  }
}

/** Registers `logs`. */
export function registerLogs(program: Command): void {
  program
    .command('logs <app>')
    .description("Show an app's captured stdout and stderr (reads GET /api/v1/apps/{id}/logs)")
    .option('--api <url>', 'control plane URL')
    .option('-f, --follow', 'keep printing new lines as they arrive (across redeploys) until interrupted')
    .option('--process <name>', 'only this process (e.g. web)')
    .option('--allocation <id>', 'only this allocation')
    .option('--release <release>', 'only this release (commit prefix)')
    .option('--stream <stream>', 'stdout or stderr')
    .option('--since <time>', 'from this time: a duration before now (10m, 2h, 7d) or an ISO 8601 time')
    .option('--until <time>', 'before this time (not with --follow)')
    .option('--grep <text>', 'only lines containing this text (case-insensitive)')
    .option('--limit <n>', 'at most this many lines (the newest), 1 to 10000', '200')
    .option('--json', 'one JSON object a line')
    .action(async (app: string, opts: LogsOptions) => {
      const query = new URLSearchParams();
      for (const key of ['process', 'allocation', 'release', 'stream', 'since', 'until', 'grep', 'limit'] as const)
        if (opts[key] !== undefined) query.set(key, opts[key]);
      const path = `/api/v1/apps/${encodeURIComponent(app)}/logs`;
      const print = printer(opts.json === true, process.stdout.isTTY === true && !process.env.NO_COLOR);
      if (opts.follow) {
        query.set('follow', 'true');
        await follow(`${path}?${query}`, opts, print);
        return;
      }
      const page = await apiGet<LogPage>(`${path}?${query}`, opts);
      for (const line of page.lines) print(line);
    });
}
