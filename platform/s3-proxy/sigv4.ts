/**
 * AWS Signature Version 4 for the S3 proxy, on `@smithy/signature-v4` (the signer the AWS SDK
 * itself uses): verifying an app's header-signed request by signing the same canonical request with
 * its secret, and signing a request onward with the platform's key.
 */
import { timingSafeEqual } from 'node:crypto';
import { Sha256 } from '@smithy/core/checksum';
import { HttpRequest } from '@smithy/core/protocols';
import { SignatureV4 } from '@smithy/signature-v4';

/** The parts of `Authorization: AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...`. */
export interface SigV4Authorization {
  readonly accessKeyId: string;
  readonly date: string;
  readonly region: string;
  readonly service: string;
  readonly signedHeaders: readonly string[];
  readonly signature: string;
}

/** Parses a SigV4 Authorization header; undefined when it is not one. */
export function parseAuthorization(header: string | undefined): SigV4Authorization | undefined {
  if (header === undefined) return undefined;
  const match =
    /^AWS4-HMAC-SHA256\s+Credential=([^/\s,]+)\/(\d{8})\/([^/\s,]+)\/([^/\s,]+)\/aws4_request\s*,\s*SignedHeaders=([a-z0-9;-]+)\s*,\s*Signature=([0-9a-f]{64})\s*$/.exec(
      header,
    );
  if (!match) return undefined;
  return {
    accessKeyId: match[1]!,
    date: match[2]!,
    region: match[3]!,
    service: match[4]!,
    signedHeaders: match[5]!.split(';'),
    signature: match[6]!,
  };
}

/** `x-amz-date` (`20260101T000000Z`) as a Date; undefined when malformed. */
export function parseAmzDate(value: string | undefined): Date | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value ?? '');
  if (!m) return undefined;
  const date = new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!));
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** A request as the signer sees it. */
export interface SignableRequest {
  readonly method: string;
  /** Host header value (`127.0.0.1:9000`). */
  readonly host: string;
  /** The path exactly as sent (still percent-encoded). */
  readonly path: string;
  /** Decoded query parameters; repeated names are not supported by S3 and keep the last value. */
  readonly query: Readonly<Record<string, string>>;
  /** Lower-case header names and their values. */
  readonly headers: Readonly<Record<string, string>>;
}

function toHttpRequest(request: SignableRequest, headers: Record<string, string>): HttpRequest {
  const [hostname, port] = splitHost(request.host);
  return new HttpRequest({
    method: request.method,
    protocol: 'http:',
    hostname,
    ...(port === undefined ? {} : { port }),
    path: request.path,
    query: { ...request.query },
    headers,
  });
}

function splitHost(host: string): [string, number | undefined] {
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(host);
  return m ? [m[1]!, m[2] === undefined ? undefined : Number(m[2])] : [host, undefined];
}

/**
 * True when `authorization` is the signature of `request` under `secretAccessKey`: the request's
 * signed headers (as sent, `host` included) are signed again at the request's `x-amz-date`.
 */
export async function verifySigV4(
  request: SignableRequest,
  authorization: SigV4Authorization,
  secretAccessKey: string,
  signingDate: Date,
): Promise<boolean> {
  const headers: Record<string, string> = {};
  for (const name of authorization.signedHeaders) {
    const value = name === 'host' ? request.host : request.headers[name];
    if (value === undefined) return false;
    headers[name] = value;
  }
  const signer = new SignatureV4({
    credentials: { accessKeyId: authorization.accessKeyId, secretAccessKey },
    region: authorization.region,
    service: authorization.service,
    sha256: Sha256,
    uriEscapePath: false,
    applyChecksum: false,
  });
  const signed = await signer.sign(toHttpRequest(request, headers), {
    signingDate,
    signableHeaders: new Set(authorization.signedHeaders),
  });
  const expected = /Signature=([0-9a-f]{64})$/.exec(String(signed.headers.authorization))?.[1] ?? '';
  return expected.length === 64 && timingSafeEqual(Buffer.from(expected), Buffer.from(authorization.signature));
}

/** Signs `request` (path and query as given, headers to forward) with the platform's key; returns the headers to send. */
export async function signOnward(
  request: SignableRequest,
  credentials: { readonly accessKeyId: string; readonly secretAccessKey: string },
  region: string,
): Promise<Record<string, string>> {
  const signer = new SignatureV4({
    credentials,
    region,
    service: 's3',
    sha256: Sha256,
    uriEscapePath: false,
    applyChecksum: true,
  });
  const signed = await signer.sign(toHttpRequest(request, { ...request.headers, host: request.host }));
  return Object.fromEntries(Object.entries(signed.headers).map(([k, v]) => [k, String(v)]));
}
