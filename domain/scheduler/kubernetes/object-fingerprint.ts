/**
 * The `svc.dev/fingerprint` annotation: a hash of an object without it, so the driver compares what
 * it would apply with what it reads back by one string.
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { canonicalJson } from '../../canonical-json.js';
import { SvcAnnotation } from './labels.js';
import { shortHash } from './names.js';

/** Sets `svc.dev/fingerprint` to a hash of the object without it, so equal objects compare by one string. */
export function withFingerprint<T extends { metadata?: V1ObjectMeta }>(object: T): T {
  const { [SvcAnnotation.fingerprint]: _old, ...annotations } = object.metadata?.annotations ?? {};
  const bare = { ...object, metadata: { ...object.metadata, annotations } };
  return {
    ...bare,
    metadata: {
      ...bare.metadata,
      annotations: { ...annotations, [SvcAnnotation.fingerprint]: shortHash(canonicalJson(bare), 32) },
    },
  };
}

/** The fingerprint annotation of an object as read back (absent when another writer created it). */
export function fingerprintOf(object: { metadata?: V1ObjectMeta } | undefined): string | undefined {
  return object?.metadata?.annotations?.[SvcAnnotation.fingerprint];
}
