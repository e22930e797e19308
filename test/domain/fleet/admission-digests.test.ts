// tier: full
import test from 'ava';
import fc from 'fast-check';
import { canonicalJson } from '../../../domain/canonical-json.js';
import { ValidationError } from '../../../domain/errors.js';
import {
  derivedIdempotencyKey,
  parseLogicalIdentity,
  requestDigest,
  SNAPSHOT_DIGEST_FIELDS,
  snapshotDigest,
  type LogicalIdentity,
} from '../../../domain/fleet/admission-identity.js';
import { parseReceiptV4, receiptDigest, receiptMismatches } from '../../../domain/fleet/receipt-v4.js';
import { SAMPLE } from '../../helpers/fleet/restricted-fixture.js';
import { sampleIdentity, sampleReceipt, sha256 } from '../../helpers/fleet/receipts.js';

const name = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,20}$/);
const hex = (n: number) => fc.stringMatching(new RegExp(`^[0-9a-f]{${n}}$`));
const identityArb: fc.Arbitrary<LogicalIdentity> = fc.record({
  candidate: fc.record({ app: name, environment: name }),
  source: fc.record({
    repository: fc.tuple(fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/), name).map(([o, r]) => `${o}/${r}`),
    sha: hex(40),
  }),
  artifact: fc.record({
    image: fc.tuple(fc.stringMatching(/^[a-z][a-z0-9./-]{0,20}$/), hex(64)).map(([n, d]) => `${n}@sha256:${d}`),
  }),
  plan: fc.record({ namespace: name, planId: name, planSha256: hex(64) }),
  rootAttemptId: name,
});

/** Re-serializes a value with object keys in a random order and random whitespace, then parses it back. */
function reshuffled(value: unknown, order: number[], spaces: number): unknown {
  const shuffle = (v: unknown, depth: number): unknown => {
    if (Array.isArray(v)) return v.map((x) => shuffle(x, depth + 1));
    if (v === null || typeof v !== 'object') return v;
    const keys = Object.keys(v);
    const rotated = keys.map((_, i) => keys[(i + (order[depth % order.length] ?? 0)) % keys.length]!);
    return Object.fromEntries(rotated.reverse().map((k) => [k, shuffle((v as Record<string, unknown>)[k], depth + 1)]));
  };
  return JSON.parse(JSON.stringify(shuffle(value, 0), null, spaces).replace(/\n/g, '\n\t '));
}

/** Every covered leaf of the identity, with a function that changes it. */
const COVERED: readonly [string, (i: LogicalIdentity) => LogicalIdentity][] = [
  ['candidate.app', (i) => ({ ...i, candidate: { ...i.candidate, app: `${i.candidate.app}x` } })],
  [
    'candidate.environment',
    (i) => ({ ...i, candidate: { ...i.candidate, environment: `${i.candidate.environment}x` } }),
  ],
  ['source.repository', (i) => ({ ...i, source: { ...i.source, repository: `${i.source.repository}x` } })],
  [
    'source.sha',
    (i) => ({ ...i, source: { ...i.source, sha: (i.source.sha[0] === 'a' ? 'b' : 'a') + i.source.sha.slice(1) } }),
  ],
  ['artifact.image', (i) => ({ ...i, artifact: { image: `x${i.artifact.image}` } })],
  ['plan.namespace', (i) => ({ ...i, plan: { ...i.plan, namespace: `${i.plan.namespace}x` } })],
  ['plan.planId', (i) => ({ ...i, plan: { ...i.plan, planId: `${i.plan.planId}x` } })],
  [
    'plan.planSha256',
    (i) => ({
      ...i,
      plan: { ...i.plan, planSha256: (i.plan.planSha256[0] === 'a' ? 'b' : 'a') + i.plan.planSha256.slice(1) },
    }),
  ],
  ['rootAttemptId', (i) => ({ ...i, rootAttemptId: `${i.rootAttemptId}x` })],
];

test('requestDigest is stable under key order and whitespace of the input and changes with every covered field', (t) => {
  fc.assert(
    fc.property(
      identityArb,
      fc.array(fc.nat(7), { minLength: 1, maxLength: 4 }),
      fc.integer({ min: 0, max: 4 }),
      (identity, order, spaces) => {
        const digest = requestDigest(identity);
        t.is(requestDigest(parseLogicalIdentity(reshuffled(identity, order, spaces))), digest);
        t.regex(digest, /^[0-9a-f]{64}$/);
        const seen = new Set([digest]);
        for (const [, change] of COVERED) {
          const changed = requestDigest(change(identity));
          if (seen.has(changed)) return false;
          seen.add(changed);
        }
        return true;
      },
    ),
    { numRuns: 200 },
  );
});

test('derivedIdempotencyKey changes with the authorized repository, environment, app and client key, and ignores their order', (t) => {
  fc.assert(
    fc.property(
      name,
      name,
      name,
      fc.stringMatching(/^[\x21-\x7e]{1,40}$/),
      (repository, environment, app, clientKey) => {
        const key = derivedIdempotencyKey({ repository, environment, app, clientKey });
        t.is(derivedIdempotencyKey({ clientKey, app, environment, repository }), key);
        const variants = [
          derivedIdempotencyKey({ repository: `${repository}x`, environment, app, clientKey }),
          derivedIdempotencyKey({ repository, environment: `${environment}x`, app, clientKey }),
          derivedIdempotencyKey({ repository, environment, app: `${app}x`, clientKey }),
          derivedIdempotencyKey({ repository, environment, app, clientKey: `${clientKey}x` }),
        ];
        return new Set([key, ...variants]).size === 5;
      },
    ),
    { numRuns: 200 },
  );
});

test('snapshotDigest orders the top-level fields as the spec lists them, canonicalizes inside them, excludes the digest and changes with every field', (t) => {
  const snapshot = {
    id: 'adm_1',
    ref: 'r',
    liveCheckedAt: 'a',
    nonceWrittenAt: 'b',
    nonceReadAt: 'c',
    verification: { receiptSha256: 'x', proofDigests: { sbom: 's', provenance: 'p' } },
    retryLineage: ['one'],
    checkpointRefs: [{ kind: 'external_admission', attemptId: 'one' }],
    allocations: [{ region: 'r1', nodeId: 'n' }],
  };
  const digest = snapshotDigest(snapshot);
  t.is(
    digest,
    sha256(
      `{${SNAPSHOT_DIGEST_FIELDS.map((f) => `${JSON.stringify(f)}:${canonicalJson((snapshot as Record<string, unknown>)[f])}`).join(',')}}`,
    ),
  );
  t.is(snapshotDigest({ ...(reshuffled(snapshot, [3, 1], 2) as object), digest: 'ignored' }), digest);
  for (const field of SNAPSHOT_DIGEST_FIELDS) t.not(snapshotDigest({ ...snapshot, [field]: 'changed' }), digest, field);
});

test('receiptDigest is stable under key order and whitespace, the receipt holds only the nonce hash, and a v3 receipt is refused', (t) => {
  const nonce = 'raw-nonce-material-never-shown';
  const receipt = sampleReceipt(sampleIdentity(), { admissionId: 'adm_0123456789abcdef0123', generation: 1, nonce });
  const parsed = parseReceiptV4(reshuffled(receipt, [2, 5, 1], 3));
  t.is(receiptDigest(parsed), receiptDigest(receipt));
  t.false(canonicalJson(parsed).includes(nonce));
  t.is(parsed.nonceSha256, sha256(nonce));
  t.throws(() => parseReceiptV4({ ...receipt, schemaVersion: 'v3' }), {
    instanceOf: ValidationError,
    message: /only v4 receipts are accepted \(v3 was removed\)/,
  });
  t.throws(() => parseReceiptV4({ ...receipt, nonce }), {
    instanceOf: ValidationError,
    message: /unexpected member\(s\) nonce/,
  });
  t.throws(() => parseReceiptV4({ ...receipt, ingressNodeIds: ['same', 'same'] }), {
    message: /two distinct ingress nodes/,
  });
  const proof = { ...receipt.scheduler.runtime, JobModifyIndex: 43 };
  t.throws(() => parseReceiptV4({ ...receipt, scheduler: { ...receipt.scheduler, runtime: proof } }), {
    message: /scheduler.runtime.proofSha256: is not the canonical-JSON SHA-256/,
  });
});

test('receiptMismatches names every broken binding between a receipt and its admission', (t) => {
  const identity = sampleIdentity();
  const receipt = sampleReceipt(identity, { admissionId: 'adm_0123456789abcdef0123', generation: 2, nonce: 'n' });
  const expected = {
    admissionId: 'adm_0123456789abcdef0123',
    generation: 2,
    nonceSha256: sha256('n'),
    identity,
    migrationJobId: SAMPLE.migrationJobId,
    migrationHclSha256: SAMPLE.migrationHcl,
    runtimeJobId: SAMPLE.runtimeJobId,
    runtimeHclSha256: SAMPLE.runtimeHcl,
  };
  t.deepEqual(receiptMismatches(receipt, expected), []);
  const wrong = receiptMismatches(
    { ...receipt, generation: 1, chronology: { ...receipt.chronology, exercise: receipt.chronology.prepare } },
    { ...expected, nonceSha256: sha256('other'), runtimeJobId: 'other-job' },
  );
  t.deepEqual(wrong, [
    'receipt.generation is not the current nonce generation 2',
    'receipt.nonceSha256 is not the hash of the current nonce',
    'receipt.scheduler.runtime.JobID is not the configured runtime job',
    'receipt.chronology must run prepare, migration, runtime, exercise in that order',
  ]);
});
