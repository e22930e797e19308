/**
 * The knowledge store's reader of plain JSON request bodies (docs/adr/0203): a write with a 384-dim
 * vector is ~7 KB of JSON, and the generic body parser spent as much on finding its type, wrapping
 * the socket in an inflate stream and decoding it chunk by chunk as on the parse. A POST whose
 * `Content-Type` is `application/json` (UTF-8) and that has no `Content-Encoding` is read here into
 * one buffer of its announced length and parsed once; every other body goes to the generic parser.
 *
 * The answers are the generic parser's: a body over the limit is a 413 (`payload_too_large`, refused
 * from its `Content-Length` before it is read), malformed JSON or a `__proto__` key a 400
 * (`invalid_json`), a body shorter or longer than its `Content-Length` a 400, an empty body `''`.
 */
import type { Context, Middleware, Next } from 'koa';

interface BodyError extends Error {
  status: number;
  expose: boolean;
  type: string;
}

function bodyError(status: number, message: string, type: string, name?: string): BodyError {
  const error = new Error(message) as BodyError;
  if (name !== undefined) error.name = name;
  error.status = status;
  error.expose = true;
  error.type = type;
  return error;
}

const tooLarge = () => bodyError(413, 'request entity too large', 'entity.too.large');

/** True when `contentType` is JSON in UTF-8 (the only charset JSON has, RFC 8259). */
function plainJson(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const semi = contentType.indexOf(';');
  const type = (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
  if (type !== 'application/json') return false;
  if (semi < 0) return true;
  const params = contentType
    .slice(semi + 1)
    .trim()
    .toLowerCase();
  return params === '' || /^charset="?utf-?8"?$/.test(params);
}

/** Whether `ctx`'s body is read by {@link readJsonBody}. */
export function isPlainJsonPost(ctx: Context): boolean {
  const encoding = ctx.req.headers['content-encoding'];
  return (
    ctx.method === 'POST' &&
    (encoding === undefined || encoding === 'identity') &&
    plainJson(ctx.req.headers['content-type']) &&
    ctx.request.body === undefined
  );
}

/** The body's bytes, at most `limit` of them. */
function readBytes(ctx: Context, limit: number): Promise<Buffer> {
  const req = ctx.req;
  const header = req.headers['content-length'];
  const length = header === undefined ? undefined : Number(header);
  if (length !== undefined && length > limit) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
      req.off('close', onClose);
    };
    const fail = (error: Error) => {
      cleanup();
      req.resume(); // drain what is left so the connection can answer
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) fail(tooLarge());
      else chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      if (length !== undefined && received !== length)
        reject(bodyError(400, 'request size did not match content length', 'request.size.invalid'));
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received));
    };
    const onError = (error: Error) => fail(error);
    const onAborted = () => fail(bodyError(400, 'request aborted', 'request.aborted'));
    const onClose = () => {
      if (!req.readableEnded) onAborted();
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
    req.on('close', onClose);
  });
}

// A `__proto__` key, also written with \u escapes (the pattern @hapi/bourne uses).
const SUSPECT_PROTO =
  /"(?:_|\\u005[Ff])(?:_|\\u005[Ff])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff])(?:_|\\u005[Ff])"/;

function hasProtoKey(value: unknown): boolean {
  const stack = [value];
  while (stack.length > 0) {
    const next = stack.pop();
    if (next === null || typeof next !== 'object') continue;
    if (Object.prototype.hasOwnProperty.call(next, '__proto__')) return true;
    for (const key in next) stack.push((next as Record<string, unknown>)[key]);
  }
  return false;
}

/** Parses JSON text as the generic parser does (non-strict: any JSON value; '' stays ''). */
export function parseJsonText(text: string): unknown {
  if (text === '') return '';
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw bodyError(400, (error as Error).message, 'entity.parse.failed', 'SyntaxError');
  }
  if (typeof value === 'object' && value !== null && SUSPECT_PROTO.test(text) && hasProtoKey(value))
    throw bodyError(400, 'Object contains forbidden prototype property', 'entity.parse.failed', 'SyntaxError');
  return value;
}

/**
 * Body middleware: plain JSON POSTs are read and parsed here with the limit `limitOf(ctx)`; the rest
 * go to `fallback(ctx)`, the generic parser with the same limit.
 */
export function jsonBodyFastPath(
  limitOf: (ctx: Context) => number,
  fallback: (ctx: Context) => Middleware,
): Middleware {
  return async (ctx: Context, next: Next) => {
    if (!isPlainJsonPost(ctx)) return fallback(ctx)(ctx, next);
    if (ctx.req.closed) {
      // As the generic parser answers a request whose connection is gone before its body was read.
      ctx.status = 499;
      ctx.body = 'Request already closed';
      return;
    }
    const bytes = await readBytes(ctx, limitOf(ctx));
    const text = bytes.toString('utf8');
    ctx.request.body = parseJsonText(text);
    (ctx.request as { rawBody?: string }).rawBody = text;
    return next();
  };
}
