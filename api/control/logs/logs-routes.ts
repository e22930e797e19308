/**
 * Log routes: `GET /api/v1/apps/{id}/logs` reads an app's captured lines with filters (`process`,
 * `allocation`, `release`, `stream`, `since`, `until`, `grep`, `limit`); with `follow=true` it
 * answers a Server-Sent Events stream: the newest `limit` lines, then each new line, across
 * redeploys, until the client goes. Scope `logs:read` (or the control token) when auth is on.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import {
  parseLogFollow,
  parseLogGrep,
  parseLogLimit,
  parseLogName,
  parseLogStream,
  parseLogTime,
  type LogLine,
  type LogQuery,
} from '../../../domain/logs/index.js';
import { ValidationError } from '../../../domain/errors.js';
import type { LogService } from '../../../controllers/logs/log-service.js';
import { queryParam } from '../events/events-routes.js';

/** Heartbeat comment interval of a follow stream (keeps proxies from closing an idle stream). */
const HEARTBEAT_MS = 15_000;
const KNOWN = new Set(['process', 'allocation', 'release', 'stream', 'since', 'until', 'grep', 'limit', 'follow']);

/** A log line as the API shows it. */
export interface LogLineView {
  /** Increasing per app: a follow stream resumes after the last id it sent. */
  readonly id: number;
  /** ISO 8601. */
  readonly at: string;
  readonly process: string;
  readonly allocation: string;
  readonly release: string;
  readonly stream: 'stdout' | 'stderr';
  readonly line: string;
}

/** A line as the API shows it. */
export function logLineView(line: LogLine): LogLineView {
  return {
    id: line.id,
    at: new Date(line.at).toISOString(),
    process: line.process,
    allocation: line.allocation,
    release: line.release,
    stream: line.stream,
    line: line.line,
  };
}

function logQueryOf(ctx: Context, app: string): LogQuery {
  for (const name of Object.keys(ctx.query))
    if (!KNOWN.has(name))
      throw new ValidationError(`${name}: is not a filter of the logs (${[...KNOWN].join(', ')})`, {
        code: 'invalid_request',
        details: { field: name },
      });
  const now = Date.now();
  const since = queryParam(ctx, 'since');
  const until = queryParam(ctx, 'until');
  const query: LogQuery = {
    app,
    limit: parseLogLimit(queryParam(ctx, 'limit')),
    ...optional('process', parseLogName('process', queryParam(ctx, 'process'))),
    ...optional('allocation', parseLogName('allocation', queryParam(ctx, 'allocation'))),
    ...optional('release', parseLogName('release', queryParam(ctx, 'release'))),
    ...optional('stream', parseLogStream(queryParam(ctx, 'stream'))),
    ...optional('grep', parseLogGrep(queryParam(ctx, 'grep'))),
    ...optional('since', since === undefined ? undefined : parseLogTime('since', since, now)),
    ...optional('until', until === undefined ? undefined : parseLogTime('until', until, now)),
  };
  if (query.since !== undefined && query.until !== undefined && query.since >= query.until)
    throw new ValidationError('since: must be before until', { code: 'invalid_request', details: { field: 'since' } });
  return query;
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/** The log routes over a log service. */
export function logsRoutes(logs: LogService): Router {
  const router = new Router();
  router.get('/api/v1/apps/:id/logs', (ctx) => {
    const app = ctx.params.id!;
    const query = logQueryOf(ctx, app);
    const follow = parseLogFollow(queryParam(ctx, 'follow'));
    logs.assertApp(app);
    if (!follow) {
      const lines = logs.read(query);
      ctx.body = { app, lines: lines.map(logLineView) };
      return;
    }
    if (query.until !== undefined)
      throw new ValidationError('until: cannot be given with follow=true', {
        code: 'invalid_request',
        details: { field: 'until' },
      });
    // From here the response is a stream the route writes itself.
    ctx.respond = false;
    const res = ctx.res;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.write(`event: ready\ndata: ${JSON.stringify({ app })}\n\n`);
    const stop = logs.follow(query, query.limit, (lines) => {
      let chunk = '';
      for (const line of lines) chunk += `id: ${line.id}\ndata: ${JSON.stringify(logLineView(line))}\n\n`;
      res.write(chunk);
    });
    const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
    heartbeat.unref();
    const end = () => {
      clearInterval(heartbeat);
      stop();
    };
    ctx.req.on('close', end);
    res.on('close', end);
    res.on('error', end);
  });
  return router;
}
