/**
 * What the fast paths before Koa share (ADR 0200, ADR 0215): which POSTs they may take (a JSON body
 * with a `Content-Length` within the body limit, no transfer or content encoding), reading and
 * parsing that body as the body parser does, and answering as Koa's request-context and error
 * middlewares do (the request id rule and `X-Request-Id`, the error table, a 5xx logged with its
 * request id, the `request` log line).
 */
import type http from 'node:http';
import bourne from '@hapi/bourne';
import type { LoggerPort as Logger } from '../../domain/logger.js';
import { errorResponse } from './error-middleware.js';
import { requestIdFor } from './request-context.js';

/** The JSON content types a fast path takes; the body parser takes more, and gets them. */
const JSON_TYPE = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;
const JSON_HEADER = 'application/json; charset=utf-8';

/** The answer of a fast path's handler: a status and a JSON body. */
export interface JsonAnswer {
  readonly status: number;
  readonly body: unknown;
}

/** Whether `req` carries a plain JSON body a fast path may read: else Koa answers it (413, 415, chunked). */
export function isPlainJsonPost(req: http.IncomingMessage, bodyLimitBytes: number): boolean {
  const headers = req.headers;
  const length = headers['content-length'];
  const type = headers['content-type'];
  return (
    length !== undefined &&
    Number(length) <= bodyLimitBytes &&
    headers['transfer-encoding'] === undefined &&
    headers['content-encoding'] === undefined &&
    type !== undefined &&
    JSON_TYPE.test(type)
  );
}

/**
 * Reads the body of a request {@link isPlainJsonPost} took and answers it with `handle`'s answer, in
 * the shape and with the headers and log line Koa's middlewares give the same route. `handle` gets
 * the parsed body (a malformed one is a 400 `invalid_json` before it runs) and the request id.
 */
export function answerJsonPost(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  path: string,
  logger: Logger,
  handle: (body: unknown, requestId: string) => Promise<JsonAnswer>,
  after?: (status: number) => void,
): void {
  const requestId = requestIdFor(headerValue(req.headers['x-request-id']));
  const started = process.hrtime.bigint();
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  // A request cut off before its end has nobody to answer; its socket is gone.
  req.on('error', () => undefined);
  req.on('end', () => {
    void answer(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
  });

  async function answer(raw: Buffer): Promise<void> {
    let status: number;
    let payload: string;
    let extra: Record<string, string> = {};
    try {
      const answered = await handle(parseJsonBody(raw), requestId);
      status = answered.status;
      payload = JSON.stringify(answered.body);
    } catch (error) {
      const failed = errorResponse(error);
      if (failed.status >= 500) {
        logger.error({ err: error, requestId, method: 'POST', path }, 'unexpected error');
        failed.body.error.details.requestId = requestId;
      }
      status = failed.status;
      payload = JSON.stringify(failed.body);
      extra = failed.headers;
    }
    res.writeHead(status, {
      'X-Request-Id': requestId,
      'Content-Type': JSON_HEADER,
      'Content-Length': Buffer.byteLength(payload),
      ...extra,
    });
    res.end(payload);
    after?.(status);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    logger.info({ requestId, method: 'POST', path, status, ms: Math.round(ms * 100) / 100 }, 'request');
  }
}

/** A header as Koa's `ctx.get` reads it: `''` when absent. */
function headerValue(value: string | string[] | undefined): string {
  return value === undefined ? '' : Array.isArray(value) ? value.join(', ') : value;
}

/**
 * The body as the body parser reads a JSON body (co-body with `jsonStrict: false`): UTF-8 without a
 * byte order mark, `''` when empty, prototype poisoning refused; a syntax error is a 400.
 */
export function parseJsonBody(body: Buffer): unknown {
  let text = body.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text === '') return '';
  try {
    return bourne.parse(text, { protoAction: 'error' }) as unknown;
  } catch (error) {
    (error as { status?: number }).status = 400;
    throw error;
  }
}
