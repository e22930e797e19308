/**
 * Names of the Swarm objects the driver writes. Service and secret names allow letters, digits, `-`,
 * `_` and `.`, at most 63 characters (services) and 64 (secrets); longer names keep a hash of the whole.
 */
import { createHash } from 'node:crypto';

/** A short hex hash of `text`. */
export function shortHash(text: string, length = 8): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

function objectName(raw: string, max: number): string {
  const clean = raw.replace(/[^a-zA-Z0-9_.-]/g, '-').replace(/^[^a-zA-Z0-9]+/, '');
  if (clean.length <= max && clean === raw) return clean;
  const hash = shortHash(raw);
  return `${clean.slice(0, max - hash.length - 1)}-${hash}`;
}

/** The service of one version (its hash) of a job's task group. */
export function serviceName(jobId: string, group: string, versionHash: string): string {
  return objectName(`svc-${jobId}-${group}`, 63 - 9) + `-${versionHash.slice(0, 8)}`;
}

/** A secret holding `content` for a job's group: named by its content's hash, since secrets never change. */
export function secretName(jobId: string, group: string, key: string, content: string): string {
  return objectName(`svc-${jobId}-${group}-${key}`, 64 - 9) + `-${shortHash(content)}`;
}
