/**
 * The write fast path (ADR 0215): `POST /v1/namespaces/{ns}/write` answered at the node:http layer,
 * before Koa's chain, for the plain case: an exact path whose namespace segment needs no decoding, no
 * query string, a JSON body with a `Content-Length` within the body limit and no content or transfer
 * encoding, and a caller the route accepts (a token with the write permission, or any caller when the
 * store runs without tokens). Everything else returns false and goes to the Koa app, which answers as
 * before: a missing or refused token (401 with `WWW-Authenticate`), a token without the permission
 * (403), an oversized or chunked body, another content type, a query string, an encoded namespace.
 *
 * What the request gets is the Koa route's: the same handler ({@link writeOne}), the body parser's
 * JSON reading, the error table, the request id rule, `X-Request-Id` and the `request` log line
 * ({@link answerJsonPost}). Writes send no read signal (ADR 0210) on either path.
 */
import type http from 'node:http';
import type { LoggerPort as Logger } from '../../domain/logger.js';
import type { KnowledgeServices } from '../../knowledge/index.js';
import { bearerOfHeader } from '../http/bearer.js';
import { answerJsonPost, isPlainJsonPost } from '../http/json-post-fast-path.js';
import { OPEN_PRINCIPAL } from './auth.js';
import type { KnowledgeMetrics } from './metrics.js';
import type { TenantTokens } from './tenant-tokens.js';
import { writeOne } from './write-one.js';

/** The path it takes: the namespace as the router's `:ns` reads it when no percent-decoding applies. */
const WRITE_PATH = /^\/v1\/namespaces\/([A-Za-z0-9._~-]+)\/write$/;

export interface WriteFastPathOptions {
  readonly services: KnowledgeServices;
  readonly metrics: KnowledgeMetrics;
  readonly tokens: Pick<TenantTokens, 'open' | 'authenticate'>;
  readonly logger: Logger;
  readonly bodyLimitBytes: number;
}

/** A request handler for the server's intercept: true when it took the request. */
export function knowledgeWriteFastPath(
  options: WriteFastPathOptions,
): (req: http.IncomingMessage, res: http.ServerResponse) => boolean {
  const { services, metrics, tokens, logger, bodyLimitBytes } = options;
  return (req, res) => {
    if (req.method !== 'POST') return false;
    const path = req.url ?? '';
    const match = WRITE_PATH.exec(path);
    if (match === null || !isPlainJsonPost(req, bodyLimitBytes)) return false;
    let principal = OPEN_PRINCIPAL;
    if (!tokens.open) {
      const token = bearerOfHeader(req.headers.authorization ?? '');
      const found = token === undefined ? undefined : tokens.authenticate(token);
      // Refusals (401 with its challenge, 403 naming the permission) are Koa's own.
      if (found === undefined || !found.permissions.has('write')) return false;
      principal = found;
    }
    const namespace = match[1]!;
    answerJsonPost(req, res, path, logger, async (body) => ({
      status: 200,
      body: await writeOne(services, metrics, principal.tenant, namespace, body),
    }));
    return true;
  };
}
