/**
 * The ingest fast path (ADR 0200): `POST /api/events` answered at the node:http layer, before Koa's
 * chain, for the plain case: an exact `/api/events`, a JSON body with a `Content-Length` within the
 * body limit, no content or transfer encoding, and a caller the route accepts (an administrator's
 * bearer token, or none when the API runs open). Everything else returns false and goes to the Koa
 * app, which answers it as before: a missing or refused credential, an oversized or chunked body,
 * another content type, a query string. With audit receipts on (ADR 0187) it takes only an
 * administrator's bearer token, and guards the handler with a receipt as Koa's receipt middleware
 * does (same actor, action, target and refs; a malformed body is refused before the guard, as the
 * body parser refuses it before that middleware).
 *
 * What the request gets is the Koa route's: the same handler ({@link recordEvent}), the same JSON
 * parser with the body parser's options (`@hapi/bourne`, prototype poisoning refused, an empty body
 * read as `{}`), the same error table ({@link errorResponse}), the request id rule and
 * `X-Request-Id` header, the access ring, and the request log line.
 */
import type http from 'node:http';
import bourne from '@hapi/bourne';
import { isAdministrator, type Principal } from '../../../domain/auth/index.js';
import type { LoggerPort as Logger } from '../../../domain/logger.js';
import type { AccessRecorder } from '../../../domain/observability/recent-access.js';
import type { EventService } from '../../../controllers/events/event-service.js';
import { bearerOfHeader, sha256Hex } from '../../http/bearer.js';
import { errorResponse } from '../../http/error-middleware.js';
import { requestIdFor } from '../../http/request-context.js';
import type { AuditReceipts } from '../../../controllers/audit/audit-receipts.js';
import { bearerPrincipal, pathNeedsCaller } from '../auth/auth.js';
import { receiptActor, receiptSubject } from '../audit/receipt-middleware.js';
import { recordEvent, type RecordEventAnswer } from './record-event.js';

const PATH = '/api/events';
/** The JSON content types the fast path takes; the body parser takes more, and gets them. */
const JSON_TYPE = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;
const JSON_HEADER = 'application/json; charset=utf-8';

export interface IngestFastPathOptions {
  readonly events: Pick<EventService, 'emitRecord'>;
  readonly logger: Logger;
  readonly bodyLimitBytes: number;
  readonly apiToken: string | undefined;
  readonly requireExplicitAuth: boolean;
  readonly scopedToken?: (secret: string) => Principal | undefined;
  readonly access?: AccessRecorder;
  /** The production profile's audit receipts: each recorded event is guarded by one. */
  readonly receipts?: Pick<AuditReceipts, 'guard'>;
}

/** A request handler for the server's intercept: true when it took the request. */
export function eventIngestFastPath(
  options: IngestFastPathOptions,
): (req: http.IncomingMessage, res: http.ServerResponse) => boolean {
  const { events, logger, access, receipts } = options;
  const subject = receiptSubject('POST', PATH);
  const tokenHash = options.apiToken === undefined ? undefined : sha256Hex(options.apiToken);
  const needsCaller = pathNeedsCaller(PATH, {
    tokenSet: tokenHash !== undefined,
    requireExplicitAuth: options.requireExplicitAuth,
  });

  /** The handler, under a receipt when receipts are on (what `receiptMiddleware` does around the route). */
  function record(body: unknown, principal: Principal | undefined, requestId: string): Promise<RecordEventAnswer> {
    if (receipts === undefined) return recordEvent(events, body);
    return receipts.guard({
      reservation: { actor: receiptActor(principal, PATH), ...subject, refs: { request: requestId } },
      run: () => recordEvent(events, body),
      outcomeOf: () => 'succeeded',
      refsOf: (answer) => ({ status: String(answer.status) }),
    });
  }

  async function answer(
    res: http.ServerResponse,
    body: Buffer,
    principal: Principal | undefined,
    requestId: string,
  ): Promise<void> {
    const started = process.hrtime.bigint();
    let status: number;
    let payload: string;
    let extra: Record<string, string> = {};
    try {
      const recorded = await record(parseJson(body), principal, requestId);
      status = recorded.status;
      payload = JSON.stringify(recorded.body);
    } catch (error) {
      const failed = errorResponse(error);
      if (failed.status >= 500) {
        logger.error({ err: error, requestId, method: 'POST', path: PATH }, 'unexpected error');
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
    access?.record(status);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    logger.info({ requestId, method: 'POST', path: PATH, status, ms: Math.round(ms * 100) / 100 }, 'request');
  }

  return (req, res) => {
    if (req.method !== 'POST' || req.url !== PATH) return false;
    const headers = req.headers;
    const length = headers['content-length'];
    const type = headers['content-type'];
    if (
      length === undefined ||
      !(Number(length) <= options.bodyLimitBytes) ||
      headers['transfer-encoding'] !== undefined ||
      headers['content-encoding'] !== undefined ||
      type === undefined ||
      !JSON_TYPE.test(type)
    )
      return false;
    // Without a caller Koa may still find an edge identity (a receipt's actor): receipts need a bearer.
    const principal = bearerPrincipal(bearerOfHeader(headers.authorization ?? ''), tokenHash, options.scopedToken);
    if ((needsCaller || receipts !== undefined) && !isAdministrator(principal)) return false;
    const requestId = requestIdFor(headerValue(headers['x-request-id']));
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    // A request cut off before its end has nobody to answer; its socket is gone.
    req.on('error', () => undefined);
    req.on('end', () => {
      void answer(res, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), principal, requestId);
    });
    return true;
  };
}

/** A header as Koa's `ctx.get` reads it: `''` when absent. */
function headerValue(value: string | string[] | undefined): string {
  return value === undefined ? '' : Array.isArray(value) ? value.join(', ') : value;
}

/**
 * The body as the body parser reads a JSON body (co-body with `jsonStrict: false`): UTF-8 without a
 * byte order mark, `{}` when empty, prototype poisoning refused; a syntax error is a 400.
 */
function parseJson(body: Buffer): unknown {
  let text = body.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text === '') return {};
  try {
    const parsed: unknown = bourne.parse(text, { protoAction: 'error' });
    return parsed === '' ? {} : parsed;
  } catch (error) {
    (error as { status?: number }).status = 400;
    throw error;
  }
}
