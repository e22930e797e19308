// tier: quick
import test from 'ava';
import { ConflictError, UnprocessableError } from '../../../domain/errors.js';
import {
  checkNonceBudget,
  decideAdmit,
  decideBegin,
  decideCleanup,
  decideResume,
  type AdmissionState,
} from '../../../domain/fleet/admission-lifecycle.js';

const facts = (state: AdmissionState) => ({ state, requestDigest: 'digest', idempotencyKey: 'key' });
const bindings = { operationId: 'op', receiptSha256: 'r', cleanupIntentSha256: 'c', absenceProofSha256: 'a' };

test('decideBegin creates, replays a terminal admission, sends a registered one to resume, and refuses a reused key', (t) => {
  t.deepEqual(decideBegin(undefined, 'digest'), { action: 'create' });
  for (const state of ['committed', 'cleanup_ready', 'complete'] as const)
    t.deepEqual(decideBegin(facts(state), 'digest'), { action: 'replay' });
  t.throws(() => decideBegin(facts('registered'), 'digest'), { instanceOf: ConflictError, message: /call resume/ });
  t.throws(() => decideBegin(facts('committed'), 'other'), { instanceOf: UnprocessableError });
});

test('decideAdmit commits a registered admission, replays only the same receipt, and needs the original key', (t) => {
  t.is(decideAdmit(facts('registered'), 'key', 'receipt', null), 'commit');
  t.is(decideAdmit(facts('committed'), 'key', 'receipt', 'receipt'), 'replay');
  t.throws(() => decideAdmit(facts('committed'), 'key', 'other', 'receipt'), { instanceOf: ConflictError });
  t.throws(() => decideAdmit(facts('registered'), 'other-key', 'receipt', null), { instanceOf: UnprocessableError });
});

test('decideResume answers a committed admission, replaces the nonce of a registered one, and refuses another identity', (t) => {
  t.is(decideResume(facts('registered'), 'key', 'digest'), 'replace_nonce');
  t.is(decideResume(facts('complete'), 'key', 'digest'), 'existing');
  t.throws(() => decideResume(facts('registered'), 'key', 'other'), {
    instanceOf: ConflictError,
    message: /cannot change/,
  });
});

test('decideCleanup writes only when every persisted binding compares equal, after the absence proof', (t) => {
  t.is(decideCleanup('cleanup_ready', bindings, bindings), 'write');
  t.is(decideCleanup('complete', bindings, bindings), 'already_complete');
  t.throws(() => decideCleanup('registered', {}, bindings), { message: /not committed/ });
  t.throws(() => decideCleanup('committed', { ...bindings, absenceProofSha256: undefined }, bindings), {
    message: /absence proof/,
  });
  const error = t.throws(
    () => decideCleanup('cleanup_ready', bindings, { ...bindings, receiptSha256: 'x', absenceProofSha256: 'y' }),
    { instanceOf: ConflictError },
  );
  t.deepEqual(error.details.differing, ['receiptSha256', 'absenceProofSha256']);
});

test('checkNonceBudget allows three unconsumed nonces per run and refuses the fourth', (t) => {
  t.notThrows(() => checkNonceBudget(2, 'run'));
  t.throws(() => checkNonceBudget(3, 'run'), { instanceOf: ConflictError, message: /at most 3/ });
});
