/**
 * The logical identity of an external admission and the digests derived from it.
 *
 * An admission is identified, for idempotency, by the authorized repository, the environment, the
 * app and the caller's key (so two repositories can never collide on a key), and its request digest
 * covers only the candidate, source, artifact, plan and root-attempt identity: a rotated token id,
 * per-attempt evidence or the raw nonce never changes it (spec "External admission").
 */
import { createHash } from 'node:crypto';
import { canonicalDigest, canonicalJson } from '../canonical-json.js';
import { ValidationError } from '../errors.js';

/** What a deployment admitted from outside is: it cannot change over the admission's life. */
export interface LogicalIdentity {
  readonly candidate: { readonly app: string; readonly environment: string };
  readonly source: { readonly repository: string; readonly sha: string };
  readonly artifact: { readonly image: string };
  readonly plan: { readonly namespace: string; readonly planId: string; readonly planSha256: string };
  readonly rootAttemptId: string;
}

/** SHA-256 hex of a string (UTF-8). */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

const SHA256 = /^[0-9a-f]{64}$/;
const COMMIT = /^[0-9a-f]{40}$/;
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const REPOSITORY = /^[A-Za-z0-9][A-Za-z0-9-]{0,38}\/[A-Za-z0-9._-]{1,100}$/;
const IMAGE = /^[a-z0-9][a-z0-9._/:-]*@sha256:[0-9a-f]{64}$/;

/** True for a lower-case SHA-256 hex digest. */
export function isSha256(value: unknown): value is string {
  return typeof value === 'string' && SHA256.test(value);
}

/** True for a digest-pinned image reference (`name@sha256:<64 hex>`). */
export function isPinnedImage(value: unknown): value is string {
  return typeof value === 'string' && IMAGE.test(value);
}

function record(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ValidationError(`${field}: must be an object`, { code: 'invalid_request', details: { field } });
  return value as Record<string, unknown>;
}

/** Refuses members other than `keys` and returns the object (exact shapes: nothing is silently ignored). */
export function exactObject(value: unknown, field: string, keys: readonly string[]): Record<string, unknown> {
  const object = record(value, field);
  const extra = Object.keys(object).filter((key) => !keys.includes(key));
  if (extra.length > 0)
    throw new ValidationError(
      `${field}: unexpected member(s) ${extra.join(', ')}; expected exactly ${keys.join(', ')}`,
      { code: 'invalid_request', details: { field, unexpected: extra } },
    );
  const missing = keys.filter((key) => object[key] === undefined);
  if (missing.length > 0)
    throw new ValidationError(`${field}: missing ${missing.join(', ')}`, {
      code: 'invalid_request',
      details: { field, missing },
    });
  return object;
}

function text(value: unknown, field: string, pattern: RegExp, rule: string): string {
  if (typeof value !== 'string' || !pattern.test(value))
    throw new ValidationError(`${field}: must be ${rule}`, { code: 'invalid_request', details: { field } });
  return value;
}

/** Parses the exact logical identity `{ candidate, source, artifact, plan, rootAttemptId }`. */
export function parseLogicalIdentity(value: unknown, field = 'body'): LogicalIdentity {
  const body = exactObject(value, field, ['candidate', 'source', 'artifact', 'plan', 'rootAttemptId']);
  const candidate = exactObject(body.candidate, `${field}.candidate`, ['app', 'environment']);
  const source = exactObject(body.source, `${field}.source`, ['repository', 'sha']);
  const artifact = exactObject(body.artifact, `${field}.artifact`, ['image']);
  const plan = exactObject(body.plan, `${field}.plan`, ['namespace', 'planId', 'planSha256']);
  return {
    candidate: {
      app: text(candidate.app, `${field}.candidate.app`, NAME, 'an app name'),
      environment: text(candidate.environment, `${field}.candidate.environment`, NAME, 'an environment name'),
    },
    source: {
      repository: text(source.repository, `${field}.source.repository`, REPOSITORY, 'owner/name'),
      sha: text(source.sha, `${field}.source.sha`, COMMIT, 'a 40-character lower-case commit SHA'),
    },
    artifact: {
      image: text(artifact.image, `${field}.artifact.image`, IMAGE, 'a digest-pinned image (name@sha256:<64 hex>)'),
    },
    plan: {
      namespace: text(plan.namespace, `${field}.plan.namespace`, NAME, 'a namespace name'),
      planId: text(plan.planId, `${field}.plan.planId`, NAME, 'a plan id'),
      planSha256: text(plan.planSha256, `${field}.plan.planSha256`, SHA256, 'a lower-case SHA-256 hex digest'),
    },
    rootAttemptId: text(body.rootAttemptId, `${field}.rootAttemptId`, NAME, 'an attempt id'),
  };
}

/** The request digest: canonical JSON SHA-256 of exactly the covered fields. */
export function requestDigest(identity: LogicalIdentity): string {
  return canonicalDigest({
    candidate: identity.candidate,
    source: identity.source,
    artifact: identity.artifact,
    plan: identity.plan,
    rootAttemptId: identity.rootAttemptId,
  });
}

/** The stored idempotency key: the authorized repository, environment, app and the client's key. */
export function derivedIdempotencyKey(input: {
  readonly repository: string;
  readonly environment: string;
  readonly app: string;
  readonly clientKey: string;
}): string {
  return canonicalDigest({
    repository: input.repository,
    environment: input.environment,
    app: input.app,
    clientKey: input.clientKey,
  });
}

/**
 * The digest of an evidence snapshot: SHA-256 of compact UTF-8 JSON of the fields in the spec's
 * order (the members inside each field in canonical order), the digest itself excluded.
 */
export const SNAPSHOT_DIGEST_FIELDS = [
  'id',
  'ref',
  'liveCheckedAt',
  'nonceWrittenAt',
  'nonceReadAt',
  'verification',
  'retryLineage',
  'checkpointRefs',
  'allocations',
] as const;
export function snapshotDigest(snapshot: Readonly<Record<string, unknown>>): string {
  const body = SNAPSHOT_DIGEST_FIELDS.map(
    (field) => `${JSON.stringify(field)}:${canonicalJson(snapshot[field] ?? null)}`,
  ).join(',');
  return sha256Hex(`{${body}}`);
}
