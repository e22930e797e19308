/**
 * Access routes: access patterns (gateway, log push and edge analytics aggregates), the edge log
 * push receiver (its own shared secret, HTTPS only) and a manual edge analytics sync.
 */
import zlib from 'node:zlib';
import Router from '@koa/router';
import type { Context } from 'koa';
import {
  ForbiddenError,
  PayloadTooLargeError,
  UnauthorizedError,
  UnavailableError,
  ValidationError,
} from '../../../domain/errors.js';
import { normalizeHostname } from '../../../domain/routing/index.js';
import type { Routing } from '../../../controllers/routing/routing.js';
import { secretEquals, sha256Hex } from '../../http/bearer.js';

export interface AccessRoutesOptions {
  readonly routing: Routing;
  /** `SVC_EDGE_LOGPUSH_TOKEN`; unset: the receiver refuses every batch. */
  readonly logpushToken: string | undefined;
  readonly bodyLimitBytes: number;
}

/** The log push secret of a request: X-Svc-Logpush-Token, X-Edge-Log-Secret or Authorization: Bearer. */
function logpushSecret(ctx: Context): string | undefined {
  const header = ctx.get('x-svc-logpush-token') || ctx.get('x-edge-log-secret');
  if (header !== '') return header;
  return /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'))?.[1];
}

/** True when the request came over TLS, or from the loopback boundary that terminated it (X-Forwarded-Proto: https). */
function isHttps(ctx: Context): boolean {
  if ((ctx.req.socket as { encrypted?: boolean }).encrypted === true) return true;
  const peer = ctx.req.socket.remoteAddress ?? '';
  const loopback = peer === '::1' || peer.startsWith('127.') || peer.startsWith('::ffff:127.');
  return loopback && ctx.get('x-forwarded-proto').split(',')[0]?.trim().toLowerCase() === 'https';
}

async function rawBody(ctx: Context, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new PayloadTooLargeError(`the log push batch exceeds ${limit} bytes`);
    chunks.push(chunk);
  }
  let buffer = Buffer.concat(chunks);
  if (/gzip/i.test(ctx.get('content-encoding')) || (buffer[0] === 0x1f && buffer[1] === 0x8b)) {
    try {
      buffer = zlib.gunzipSync(buffer, { maxOutputLength: limit * 4 });
    } catch {
      throw new ValidationError('the log push batch is not valid gzip', { code: 'invalid_logpush_batch' });
    }
  }
  return buffer.toString('utf8');
}

/** `GET /api/access/patterns`, `POST /api/access/edge/logpush`, `POST /api/access/edge/sync`. */
export function accessRoutes(options: AccessRoutesOptions): Router {
  const router = new Router();
  const tokenHash = options.logpushToken === undefined ? undefined : sha256Hex(options.logpushToken);
  router.get('/api/access/patterns', (ctx) => {
    const hoursText = typeof ctx.query.hours === 'string' ? ctx.query.hours : undefined;
    const hours = hoursText === undefined ? 24 : Number(hoursText);
    if (!Number.isInteger(hours) || hours < 1 || hours > 24 * 90)
      throw new ValidationError(`hours: "${hoursText}" must be a whole number from 1 to 2160`, {
        code: 'invalid_query',
        details: { hours: hoursText },
      });
    const hostnameText = typeof ctx.query.hostname === 'string' ? ctx.query.hostname : undefined;
    const hostname = hostnameText === undefined ? undefined : normalizeHostname(hostnameText);
    if (hostnameText !== undefined && hostname === undefined)
      throw new ValidationError(`hostname: "${hostnameText}" is not a hostname`, {
        code: 'invalid_query',
        details: { hostname: hostnameText },
      });
    const patterns = options.routing.access.patterns({ hours, ...(hostname === undefined ? {} : { hostname }) });
    const sync = options.routing.edgeSync;
    ctx.body = {
      ...patterns,
      edgeSync: {
        configured: sync.configured,
        lastRunAt: sync.lastResult?.at ?? null,
        lastError: sync.lastError ?? null,
      },
    };
  });
  router.post('/api/access/edge/logpush', async (ctx) => {
    if (tokenHash === undefined)
      throw new UnavailableError('the log push receiver is disabled: SVC_EDGE_LOGPUSH_TOKEN is not set', {
        code: 'logpush_disabled',
      });
    const given = logpushSecret(ctx);
    if (given === undefined)
      throw new UnauthorizedError(
        'the log push receiver needs X-Svc-Logpush-Token (or X-Edge-Log-Secret, or Authorization: Bearer)',
        { code: 'missing_logpush_token' },
      );
    if (!secretEquals(given, tokenHash))
      throw new UnauthorizedError('the log push token is not valid', { code: 'invalid_logpush_token' });
    if (!isHttps(ctx))
      throw new ForbiddenError(
        'the log push receiver accepts HTTPS only (TLS, or X-Forwarded-Proto: https from the loopback proxy)',
        { code: 'https_required' },
      );
    // Parsed JSON (or text) when the body parser took it; NDJSON and gzip batches are read here.
    const body: unknown =
      ctx.request.body !== undefined &&
      !(
        typeof ctx.request.body === 'object' &&
        ctx.request.body !== null &&
        Object.keys(ctx.request.body).length === 0 &&
        !ctx.is('json')
      )
        ? ctx.request.body
        : await rawBody(ctx, options.bodyLimitBytes);
    const aggregate = options.routing.access.ingestLogpush(body);
    ctx.status = 202;
    ctx.body = { accepted: aggregate.accepted, dropped: aggregate.dropped, buckets: aggregate.counts.length };
  });
  router.post('/api/access/edge/sync', async (ctx) => {
    const sync = options.routing.edgeSync;
    if (!sync.configured)
      throw new UnavailableError('edge analytics sync is not configured: set SVC_EDGE_API_TOKEN and SVC_EDGE_ZONE_ID', {
        code: 'edge_sync_not_configured',
      });
    const result = await sync.run();
    ctx.body = {
      windows: result.windows,
      hostnames: result.hostnames,
      buckets: result.buckets,
      requests: result.requests,
    };
  });
  return router;
}
