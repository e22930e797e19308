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
import { isAdministrator, type Principal } from '../../../domain/auth/index.js';
import type { LoggerPort as Logger } from '../../../domain/logger.js';
import type { AccessRecorder } from '../../../domain/observability/recent-access.js';
import type { EventService } from '../../../controllers/events/event-service.js';
import { bearerOfHeader, sha256Hex } from '../../http/bearer.js';
import { answerJsonPost, isPlainJsonPost } from '../../http/json-post-fast-path.js';
import type { AuditReceipts } from '../../../controllers/audit/audit-receipts.js';
import { bearerPrincipal, pathNeedsCaller } from '../auth/auth.js';
import { receiptActor, receiptSubject } from '../audit/receipt-middleware.js';
import { recordEvent, type RecordEventAnswer } from './record-event.js';

const PATH = '/api/events';

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
  function record(parsed: unknown, principal: Principal | undefined, requestId: string): Promise<RecordEventAnswer> {
    // An empty body or `""` is read as `{}`, as the Koa route's `bodyOf` reads it.
    const body = parsed === '' ? {} : parsed;
    if (receipts === undefined) return recordEvent(events, body);
    return receipts.guard({
      reservation: { actor: receiptActor(principal, PATH), ...subject, refs: { request: requestId } },
      run: () => recordEvent(events, body),
      outcomeOf: () => 'succeeded',
      refsOf: (answer) => ({ status: String(answer.status) }),
    });
  }

  return (req, res) => {
    if (req.method !== 'POST' || req.url !== PATH || !isPlainJsonPost(req, options.bodyLimitBytes)) return false;
    // Without a caller Koa may still find an edge identity (a receipt's actor): receipts need a bearer.
    const principal = bearerPrincipal(bearerOfHeader(req.headers.authorization ?? ''), tokenHash, options.scopedToken);
    if ((needsCaller || receipts !== undefined) && !isAdministrator(principal)) return false;
    answerJsonPost(
      req,
      res,
      PATH,
      logger,
      (body, requestId) => record(body, principal, requestId),
      (status) => access?.record(status),
    );
    return true;
  };
}
