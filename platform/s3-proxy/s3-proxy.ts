/**
 * The S3 proxy on loopback (ADR 0188): apps sign requests with their own proxy key; the proxy checks
 * the signature, checks the request against the app's declared buckets and their access, then signs
 * it onward with the platform's key to the real S3-compatible server and streams the answer back.
 * Refusals are S3-style XML errors (403 `AccessDenied`, `SignatureDoesNotMatch`, ...) and are
 * counted in `svc_s3_proxy_refusals_total{app,reason}`.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { Counter, type Registry } from 'prom-client';
import type { CanonicalBucket } from '../../domain/spec/index.js';
import { decideBucketAccess } from '../../domain/object-storage/bucket-access.js';
import type { Logger } from '../logger.js';
import type { S3ProxyKeys } from './s3-proxy-keys.js';
import { parseAmzDate, parseAuthorization, signOnward, verifySigV4, type SignableRequest } from './sigv4.js';

/** Options of `startS3Proxy`. */
export interface S3ProxyOptions {
  /** @default 127.0.0.1 */
  readonly host?: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly keys: S3ProxyKeys;
  /** The buckets an app declares now; undefined for an app the platform does not know. */
  readonly bucketsOf: (app: string) => readonly CanonicalBucket[] | undefined;
  /** The real server and the platform's key for it. */
  readonly upstream: {
    readonly endpoint: string;
    readonly accessKeyId: string;
    readonly secretAccessKey: string;
    readonly region: string;
  };
  readonly registry: Registry;
  readonly logger: Logger;
  /** How far a request's `x-amz-date` may be from now. @default 15 minutes (as S3) */
  readonly maxSkewMs?: number;
  readonly now?: () => Date;
}

/** A running proxy. */
export interface S3Proxy {
  /** `http://127.0.0.1:<port>`: what apps receive as `S3_ENDPOINT`. */
  readonly url: string;
  /** Its metric families, to register on another registry too. */
  readonly metrics: readonly Counter<string>[];
  close(): Promise<void>;
}

/** Why a request was refused (the `reason` label). */
export type RefusalReason = 'unsigned' | 'unknown_key' | 'skewed' | 'unsupported' | 'signature' | 'access';

interface Refusal {
  readonly status: number;
  readonly code: string;
  readonly message: string;
  readonly reason: RefusalReason;
  readonly resource: string;
}

/** Headers that belong to one connection or to the app's signature, never forwarded. */
const NOT_FORWARDED = new Set([
  'authorization',
  'x-amz-date',
  'x-amz-security-token',
  'host',
  'connection',
  'keep-alive',
  'expect',
  'te',
  'trailer',
  'upgrade',
  'proxy-authorization',
  'proxy-connection',
]);
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade']);

function xmlEscape(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!,
  );
}

/** Starts the proxy. */
export async function startS3Proxy(options: S3ProxyOptions): Promise<S3Proxy> {
  const refusals = new Counter({
    name: 'svc_s3_proxy_refusals_total',
    help: 'S3 proxy requests refused, by app and reason (unsigned, unknown_key, skewed, unsupported, signature, access)',
    labelNames: ['app', 'reason'],
    registers: [options.registry],
  });
  const forwarded = new Counter({
    name: 'svc_s3_proxy_requests_total',
    help: 'S3 proxy requests signed onward to the S3 server, by app',
    labelNames: ['app'],
    registers: [options.registry],
  });
  const log = options.logger.child({ component: 's3-proxy' });
  const upstream = new URL(options.upstream.endpoint);
  const maxSkewMs = options.maxSkewMs ?? 15 * 60_000;
  const now = options.now ?? (() => new Date());

  const refuse = (
    req: http.IncomingMessage,
    res: http.ServerResponse,
    method: string,
    app: string,
    refusal: Refusal,
  ) => {
    // The body of a refused upload is read and dropped, so the connection stays usable.
    req.resume();
    refusals.inc({ app, reason: refusal.reason });
    log.info(
      { app, reason: refusal.reason, method, resource: refusal.resource, code: refusal.code },
      's3 request refused',
    );
    const requestId = randomUUID();
    const body =
      method === 'HEAD'
        ? ''
        : `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${refusal.code}</Code><Message>${xmlEscape(refusal.message)}</Message><Resource>${xmlEscape(refusal.resource)}</Resource><RequestId>${requestId}</RequestId></Error>`;
    res.writeHead(refusal.status, {
      'content-type': 'application/xml',
      'content-length': Buffer.byteLength(body),
      'x-amz-request-id': requestId,
    });
    res.end(body);
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const method = (req.method ?? 'GET').toUpperCase();
    const rawUrl = req.url ?? '/';
    const mark = rawUrl.indexOf('?');
    const rawPath = mark < 0 ? rawUrl : rawUrl.slice(0, mark);
    const rawQuery = mark < 0 ? '' : rawUrl.slice(mark + 1);
    const query: Record<string, string> = {};
    for (const [name, value] of new URLSearchParams(rawQuery)) query[name] = value;
    let path = rawPath;
    try {
      path = decodeURIComponent(rawPath);
    } catch {
      // Kept as sent; the decision refuses what it cannot place.
    }
    const header = (name: string) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value.join(',') : value;
    };
    const auth = parseAuthorization(header('authorization'));
    if (auth === undefined) {
      const presigned = 'X-Amz-Signature' in query || 'X-Amz-Credential' in query;
      return refuse(req, res, method, 'unknown', {
        status: 403,
        code: 'AccessDenied',
        reason: 'unsigned',
        resource: path,
        message: presigned
          ? 'presigned URLs are not accepted by the platform proxy; sign requests with the Authorization header'
          : 'requests need an AWS Signature Version 4 Authorization header signed with the app proxy key',
      });
    }
    const key = options.keys.lookup(auth.accessKeyId);
    const app = key?.app ?? 'unknown';
    const buckets = key === undefined ? undefined : options.bucketsOf(key.app);
    if (key === undefined || buckets === undefined)
      return refuse(req, res, method, 'unknown', {
        status: 403,
        code: 'InvalidAccessKeyId',
        reason: 'unknown_key',
        resource: path,
        message: 'the access key id is not the proxy key of any app',
      });
    const signedAt = parseAmzDate(header('x-amz-date'));
    if (signedAt === undefined || Math.abs(now().getTime() - signedAt.getTime()) > maxSkewMs)
      return refuse(req, res, method, app, {
        status: 403,
        code: 'RequestTimeTooSkewed',
        reason: 'skewed',
        resource: path,
        message: 'x-amz-date is missing or too far from the proxy time',
      });
    const payloadHash = header('x-amz-content-sha256');
    if (payloadHash === undefined || payloadHash.startsWith('STREAMING-AWS4-HMAC-SHA256'))
      return refuse(req, res, method, app, {
        status: 403,
        code: 'AccessDenied',
        reason: 'unsupported',
        resource: path,
        message:
          'x-amz-content-sha256 must be the payload hash, UNSIGNED-PAYLOAD or STREAMING-UNSIGNED-PAYLOAD-TRAILER: chunk signatures cannot be signed onward',
      });
    const headers: Record<string, string> = {};
    for (const name of Object.keys(req.headers)) headers[name] = header(name)!;
    const incoming: SignableRequest = { method, host: header('host') ?? '', path: rawPath, query, headers };
    const valid =
      signedAt.toISOString().slice(0, 10).replace(/-/g, '') === auth.date &&
      auth.service === 's3' &&
      (await verifySigV4(incoming, auth, key.secretAccessKey, signedAt));
    if (!valid)
      return refuse(req, res, method, app, {
        status: 403,
        code: 'SignatureDoesNotMatch',
        reason: 'signature',
        resource: path,
        message: 'the request signature does not match the app proxy key',
      });
    const decision = decideBucketAccess(buckets, {
      method,
      path,
      query,
      ...(header('x-amz-copy-source') === undefined ? {} : { copySource: header('x-amz-copy-source')! }),
    });
    if (!decision.allowed)
      return refuse(req, res, method, app, {
        status: 403,
        code: 'AccessDenied',
        reason: 'access',
        resource: decision.resource,
        message: decision.message,
      });

    const onward: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers))
      if (!NOT_FORWARDED.has(name) && !name.startsWith('proxy-')) onward[name] = value;
    const signed = await signOnward(
      {
        method,
        host: upstream.host,
        path: `${upstream.pathname.replace(/\/$/, '')}${rawPath}`,
        query,
        headers: onward,
      },
      { accessKeyId: options.upstream.accessKeyId, secretAccessKey: options.upstream.secretAccessKey },
      options.upstream.region,
    );
    forwarded.inc({ app });
    const client = upstream.protocol === 'https:' ? https : http;
    await new Promise<void>((resolve) => {
      const out = client.request(
        {
          protocol: upstream.protocol,
          hostname: upstream.hostname,
          port: upstream.port,
          method,
          path: `${upstream.pathname.replace(/\/$/, '')}${rawPath}${rawQuery === '' ? '' : `?${rawQuery}`}`,
          headers: signed,
        },
        (answer) => {
          const back: Record<string, string | string[]> = {};
          for (const [name, value] of Object.entries(answer.headers))
            if (value !== undefined && !HOP_BY_HOP.has(name)) back[name] = value;
          res.writeHead(answer.statusCode ?? 502, back);
          answer.pipe(res);
          answer.once('end', resolve);
          answer.once('error', () => (res.destroy(), resolve()));
        },
      );
      out.once('error', (error) => {
        log.warn({ app, err: error.message }, 's3 server unreachable');
        if (!res.headersSent) {
          const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>ServiceUnavailable</Code><Message>the S3 server cannot be reached</Message></Error>`;
          res.writeHead(503, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) });
          res.end(method === 'HEAD' ? undefined : body);
        } else res.destroy();
        resolve();
      });
      req.pipe(out);
    });
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      log.error({ err: error instanceof Error ? error.message : String(error) }, 's3 proxy request failed');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/xml' });
      res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${address.address}:${address.port}`,
    metrics: [refusals, forwarded],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
