/**
 * The external admission lifecycle (spec "External admission lifecycle (restricted mode)") as pure
 * decisions: given the stored admission (or none) and a request, what happens and with which status.
 *
 * States: `registered` (a nonce hash is registered with the evidence service), `committed` (an
 * immutable successful app.deploy operation exists; `commitPending` while the evidence commit was
 * not acknowledged), `cleanup_ready` (the evidence service added the absence proof), `complete`
 * (the external_cleanup checkpoint was written). The spec does not show the full list of state
 * values; these are the ones its table names (ADR 0151).
 */
import { ConflictError, UnprocessableError } from '../errors.js';

/** Admission states. */
export const AdmissionState = {
  registered: 'registered',
  committed: 'committed',
  cleanupReady: 'cleanup_ready',
  complete: 'complete',
} as const;
export type AdmissionState = (typeof AdmissionState)[keyof typeof AdmissionState];

/** States at or after the commit: the deployment is terminal and exact retries answer 200. */
export const TERMINAL_STATES: readonly AdmissionState[] = [
  AdmissionState.committed,
  AdmissionState.cleanupReady,
  AdmissionState.complete,
];

/** The facts of a stored admission the decisions need. */
export interface AdmissionFacts {
  readonly state: AdmissionState;
  readonly requestDigest: string;
  readonly idempotencyKey: string;
}

/** Outcome of a begin. */
export type BeginDecision = { readonly action: 'create' } | { readonly action: 'replay' };

/**
 * Begin: a new logical identity registers (201); an exact retry of a committed admission answers it
 * (200, no new nonce); a registered one must be resumed (the nonce was shown once); the same key
 * with another identity is refused.
 */
export function decideBegin(existing: AdmissionFacts | undefined, requestDigest: string): BeginDecision {
  if (existing === undefined) return { action: 'create' };
  if (existing.requestDigest !== requestDigest) throw keyReused();
  if (TERMINAL_STATES.includes(existing.state)) return { action: 'replay' };
  throw new ConflictError(
    'this admission is registered and its nonce was already returned once; call resume for a replacement nonce',
    { code: 'admission_requires_resume', details: { state: existing.state } },
  );
}

/** Admit with a receipt: verify and commit (201), or answer an exact retry (200). */
export function decideAdmit(
  existing: AdmissionFacts,
  idempotencyKey: string,
  receiptDigest: string,
  committedReceiptDigest: string | null,
): 'commit' | 'replay' {
  if (existing.idempotencyKey !== idempotencyKey) throw keyReused();
  if (TERMINAL_STATES.includes(existing.state)) {
    if (committedReceiptDigest !== receiptDigest)
      throw new ConflictError('this admission was committed with another receipt', {
        code: 'admission_already_committed',
        details: { state: existing.state },
      });
    return 'replay';
  }
  return 'commit';
}

/** Resume: the committed admission (200) or a replacement nonce (201); the logical deployment cannot change. */
export function decideResume(
  existing: AdmissionFacts,
  idempotencyKey: string,
  requestDigest: string,
): 'existing' | 'replace_nonce' {
  if (existing.idempotencyKey !== idempotencyKey) throw keyReused();
  if (existing.requestDigest !== requestDigest)
    throw new ConflictError(
      'resume must name the exact logical identity of the admission; the logical deployment cannot change',
      { code: 'logical_identity_mismatch' },
    );
  return TERMINAL_STATES.includes(existing.state) ? 'existing' : 'replace_nonce';
}

/** Names of the bindings cleanup compares, in the order they are reported. */
export const CLEANUP_BINDINGS = ['operationId', 'receiptSha256', 'cleanupIntentSha256', 'absenceProofSha256'] as const;
export type CleanupBindings = Readonly<Record<(typeof CLEANUP_BINDINGS)[number], string>>;

/** Cleanup: every persisted binding must compare equal; returns whether the checkpoint is written now or already was. */
export function decideCleanup(
  state: AdmissionState,
  persisted: Partial<CleanupBindings>,
  given: CleanupBindings,
): 'write' | 'already_complete' {
  const differing = CLEANUP_BINDINGS.filter((name) => persisted[name] === undefined || persisted[name] !== given[name]);
  if (state === AdmissionState.registered)
    throw new ConflictError('the admission is not committed; nothing can be cleaned up', {
      code: 'admission_not_committed',
      details: { state },
    });
  if (state === AdmissionState.committed && persisted.absenceProofSha256 === undefined) {
    throw new ConflictError(
      'the evidence service has not added the absence proof yet; read the context and retry later',
      { code: 'cleanup_not_ready', details: { state } },
    );
  }
  if (differing.length > 0)
    throw new ConflictError(`cleanup refused: persisted binding(s) ${differing.join(', ')} differ`, {
      code: 'cleanup_binding_mismatch',
      details: { differing },
    });
  return state === AdmissionState.complete ? 'already_complete' : 'write';
}

function keyReused(): UnprocessableError {
  return new UnprocessableError('Idempotency-Key: this key was used for a different admission request', {
    code: 'idempotency_key_reused',
  });
}

/** At most this many unconsumed nonces exist per protected CI run. */
export const MAX_UNCONSUMED_NONCES_PER_RUN = 3;
/** How long an issued nonce is valid. */
export const NONCE_TTL_MS = 30 * 60_000;
/** Expired nonce rows removed per batch (bounded, so a large backlog never holds the write lock long). */
export const EXPIRED_NONCE_BATCH = 100;

/** Refuses a fourth unconsumed nonce for one run. */
export function checkNonceBudget(unconsumed: number, run: string): void {
  if (unconsumed >= MAX_UNCONSUMED_NONCES_PER_RUN) {
    throw new ConflictError(
      `run ${run} already holds ${unconsumed} unconsumed nonces (at most ${MAX_UNCONSUMED_NONCES_PER_RUN}); admit or wait for one to expire`,
      { code: 'nonce_limit_reached', details: { limit: MAX_UNCONSUMED_NONCES_PER_RUN }, retryAfterSeconds: 60 },
    );
  }
}
