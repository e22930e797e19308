/**
 * Bucket access of apps through the platform's S3 proxy (ADR 0188): what an S3 request needs
 * (read, write or manage a bucket) and whether an app's declared buckets grant it.
 *
 * - `readOnly`: GET and HEAD of objects, listing, reading bucket settings.
 * - `readWrite`: also putting, copying, deleting objects and multipart uploads.
 * - `owner`: also creating and deleting the bucket and changing its settings (policy, ACLs, CORS,
 *   lifecycle, versioning, tags) and object ACLs.
 *
 * Requests are path-style (`/<bucket>/<key>`). Listing every bucket of the server is refused: an app
 * knows its buckets from its environment.
 */
import type { CanonicalBucket } from '../spec/index.js';

/** What a request does to a bucket. */
export const BucketNeed = {
  read: 'read',
  write: 'write',
  manage: 'manage',
} as const;
export type BucketNeed = (typeof BucketNeed)[keyof typeof BucketNeed];

/** The parts of an S3 request the decision reads (all covered by the request's signature). */
export interface S3RequestShape {
  readonly method: string;
  /** The decoded path, e.g. `/photos/2026/a.jpg`. */
  readonly path: string;
  /** Query parameter names (subresources such as `policy`, `uploads`, `delete`). */
  readonly query: Readonly<Record<string, string>>;
  /** `x-amz-copy-source` when present: a copy also reads its source. */
  readonly copySource?: string;
}

/** One bucket a request touches and what it needs there. */
export interface BucketUse {
  readonly bucket: string;
  readonly key: string | undefined;
  readonly need: BucketNeed;
}

/** Bucket settings: writing them is the owner's; reading them is a read. */
const BUCKET_SETTINGS = [
  'policy',
  'acl',
  'cors',
  'lifecycle',
  'versioning',
  'tagging',
  'website',
  'encryption',
  'replication',
  'notification',
  'logging',
  'ownershipControls',
  'publicAccessBlock',
  'object-lock',
  'accelerate',
  'requestPayment',
  'analytics',
  'metrics',
  'inventory',
  'intelligent-tiering',
];

const RANK: Readonly<Record<BucketNeed, number>> = { read: 0, write: 1, manage: 2 };
const GRANTS: Readonly<Record<CanonicalBucket['access'], number>> = { readOnly: 0, readWrite: 1, owner: 2 };

/** True when `access` covers `need`. */
export function accessCovers(access: CanonicalBucket['access'], need: BucketNeed): boolean {
  return GRANTS[access] >= RANK[need];
}

function splitBucketPath(raw: string): { bucket: string; key: string | undefined } | undefined {
  const trimmed = raw.replace(/^\/+/, '');
  if (trimmed === '') return undefined;
  const slash = trimmed.indexOf('/');
  if (slash < 0) return { bucket: trimmed, key: undefined };
  const key = trimmed.slice(slash + 1);
  return { bucket: trimmed.slice(0, slash), key: key === '' ? undefined : key };
}

/**
 * The buckets a request touches and what it needs in each; undefined for a request on no bucket
 * (listing the server's buckets), which the proxy refuses.
 */
export function bucketUses(request: S3RequestShape): BucketUse[] | undefined {
  const target = splitBucketPath(request.path);
  if (target === undefined) return undefined;
  const method = request.method.toUpperCase();
  const reads = method === 'GET' || method === 'HEAD';
  const has = (name: string) => Object.prototype.hasOwnProperty.call(request.query, name);
  let need: BucketNeed;
  if (target.key === undefined) {
    // On the bucket itself: reading lists and settings; POST ?delete deletes objects; anything else
    // (create, delete, settings) manages the bucket.
    if (reads) need = 'read';
    else if (method === 'POST' && has('delete')) need = 'write';
    else need = 'manage';
  } else if (reads) need = 'read';
  else if ((method === 'PUT' || method === 'DELETE') && (has('acl') || has('legal-hold') || has('retention')))
    need = 'manage';
  else need = 'write';
  if (target.key === undefined && !reads && BUCKET_SETTINGS.some(has)) need = 'manage';
  const uses: BucketUse[] = [{ bucket: target.bucket, key: target.key, need }];
  if (request.copySource !== undefined) {
    let source = request.copySource;
    try {
      source = decodeURIComponent(source.split('?')[0]!);
    } catch {
      // Left as sent: it will not name a declared bucket.
    }
    const from = splitBucketPath(source);
    if (from !== undefined) uses.push({ bucket: from.bucket, key: from.key, need: 'read' });
  }
  return uses;
}

/** The verdict on one request. */
export type BucketDecision =
  | { readonly allowed: true; readonly uses: readonly BucketUse[] }
  | { readonly allowed: false; readonly resource: string; readonly message: string };

/**
 * Whether an app with `buckets` may make `request`: every bucket it touches must be declared with an
 * access that covers the need, and keys (and list prefixes) must lie under a declared prefix.
 */
export function decideBucketAccess(buckets: readonly CanonicalBucket[], request: S3RequestShape): BucketDecision {
  const uses = bucketUses(request);
  if (uses === undefined)
    return {
      allowed: false,
      resource: '/',
      message: 'listing every bucket is not allowed through the proxy; use the buckets the app declares',
    };
  // A dot segment could be resolved by a server on the way into another bucket.
  const dotted = (p: string) => {
    let decoded = p;
    try {
      decoded = decodeURIComponent(p);
    } catch {
      // Kept as sent.
    }
    return [p, decoded].some((text) => text.split(/[/?]/).some((segment) => segment === '.' || segment === '..'));
  };
  if (dotted(request.path) || dotted(request.copySource ?? ''))
    return { allowed: false, resource: request.path, message: 'paths with "." or ".." segments are not allowed' };
  for (const use of uses) {
    const declared = buckets.find((b) => b.name === use.bucket);
    const resource = use.key === undefined ? use.bucket : `${use.bucket}/${use.key}`;
    if (declared === undefined)
      return { allowed: false, resource, message: `the app does not declare bucket ${use.bucket}` };
    if (!accessCovers(declared.access, use.need))
      return {
        allowed: false,
        resource,
        message: `bucket ${use.bucket} is declared ${declared.access}, which does not allow ${use.need === 'manage' ? 'managing the bucket' : 'writing'}`,
      };
    const prefix = declared.prefix;
    if (prefix !== undefined && prefix !== '') {
      const has = (name: string) => Object.prototype.hasOwnProperty.call(request.query, name);
      const listing =
        use.key === undefined &&
        request.method.toUpperCase() === 'GET' &&
        !BUCKET_SETTINGS.some(has) &&
        !has('location');
      const scoped =
        use.key !== undefined
          ? use.key.startsWith(prefix)
          : listing
            ? (request.query.prefix ?? '').startsWith(prefix)
            : true;
      if (!scoped)
        return {
          allowed: false,
          resource,
          message: `bucket ${use.bucket} is declared with prefix ${prefix}: keys and listings must stay under it`,
        };
    }
  }
  return { allowed: true, uses };
}
