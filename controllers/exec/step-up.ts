/**
 * Device-key step-up for exec sessions (ADR 0169): with authentication on, creating an exec
 * session consumes a one-use capability bound to the app and the caller, obtained by signing a
 * server nonce with an enrolled, approved device key.
 *
 * 1. `challenge(app, caller)`: a random 256-bit nonce, kept in memory for 60 s, bound to both.
 * 2. `prove({ nonce, publicKey, signature }, caller)`: the nonce is taken (one use, even on failure);
 *    the SHA-256 of the PEM public key must name an approved device enrollment in control.db; the
 *    signature (Ed25519, or ECDSA/RSA over SHA-256) must verify over
 *    `svc-exec-step-up:v1\n<app>\n<nonce>`. It returns a capability `svc_xcap_...` valid 60 s.
 * 3. `consume(capability, app, caller)`: taken once; the app and the caller must match.
 * Only SHA-256 digests of nonces and capabilities are kept; none is ever logged or put in an event.
 */
import { createHash, createPublicKey, randomBytes, verify, type KeyObject } from 'node:crypto';
import { ForbiddenError, TooManyRequestsError, ValidationError } from '../../domain/errors.js';
import type { Db } from '../../store/database.js';
import { enrollmentByKey } from '../../store/control/fleet-records.js';

/** What a nonce signs. */
export function stepUpMessage(app: string, nonce: string): string {
  return `svc-exec-step-up:v1\n${app}\n${nonce}`;
}

/** Prefix of step-up capabilities, so a leaked one is recognizable. */
export const CAPABILITY_PREFIX = 'svc_xcap_';
const TTL_MS = 60_000;
/** Outstanding nonces and capabilities kept at most (each expires within a minute). */
const MAX_OUTSTANDING = 1000;

interface Binding {
  readonly app: string;
  readonly caller: string;
  readonly expiresAt: number;
  readonly device?: string;
}

const digest = (value: string) => createHash('sha256').update(value).digest('hex');

/** Verifies a signature with the algorithm of the key's type. */
function verifies(key: KeyObject, message: string, signature: Buffer): boolean {
  const type = key.asymmetricKeyType;
  const algorithm = type === 'ed25519' || type === 'ed448' ? null : 'sha256';
  try {
    return verify(algorithm, Buffer.from(message), key, signature);
  } catch {
    return false;
  }
}

/** The step-up service of one control plane. */
export class ExecStepUp {
  private readonly nonces = new Map<string, Binding>();
  private readonly capabilities = new Map<string, Binding>();

  constructor(private readonly options: { readonly db: Db; readonly now?: () => number }) {}

  /** A nonce for `caller` to sign for `app`. */
  challenge(app: string, caller: string): { nonce: string; app: string; message: string; expiresAt: string } {
    this.prune();
    if (this.nonces.size >= MAX_OUTSTANDING)
      throw new TooManyRequestsError('too many step-up challenges are outstanding; try again in a minute', {
        code: 'step_up_challenges_exhausted',
        retryAfterSeconds: 60,
      });
    const nonce = randomBytes(32).toString('base64url');
    const expiresAt = this.now() + TTL_MS;
    this.nonces.set(digest(nonce), { app, caller, expiresAt });
    return { nonce, app, message: stepUpMessage(app, nonce), expiresAt: new Date(expiresAt).toISOString() };
  }

  /** Checks a signed nonce; returns a one-use capability bound to the nonce's app and `caller`. */
  prove(
    proof: { readonly nonce: string; readonly publicKey: string; readonly signature: string },
    caller: string,
  ): { capability: string; app: string; device: string; expiresAt: string } {
    this.prune();
    const binding = this.nonces.get(digest(proof.nonce));
    this.nonces.delete(digest(proof.nonce));
    if (binding === undefined || binding.caller !== caller)
      throw new ForbiddenError('the step-up nonce is unknown, expired, used or issued to another caller', {
        code: 'step_up_nonce_invalid',
      });
    let key: KeyObject;
    try {
      key = createPublicKey(proof.publicKey);
    } catch {
      throw new ValidationError('publicKey is not a PEM public key', {
        code: 'invalid_public_key',
        details: { field: 'publicKey' },
      });
    }
    const enrollment = enrollmentByKey(this.options.db, digest(proof.publicKey.trim()));
    if (enrollment === undefined || enrollment.state !== 'approved')
      throw new ForbiddenError(
        enrollment === undefined
          ? 'this device key is not enrolled: enroll it (POST /api/v1/fleet/devices/enroll) and have an administrator approve it'
          : `this device key's enrollment is ${enrollment.state}, not approved`,
        {
          code: 'device_not_approved',
          details: enrollment === undefined ? {} : { enrollment: enrollment.id, state: enrollment.state },
        },
      );
    if (!verifies(key, stepUpMessage(binding.app, proof.nonce), Buffer.from(proof.signature, 'base64')))
      throw new ForbiddenError('the signature does not verify with this device key', {
        code: 'step_up_signature_invalid',
        details: { enrollment: enrollment.id },
      });
    const capability = CAPABILITY_PREFIX + randomBytes(24).toString('base64url');
    const expiresAt = this.now() + TTL_MS;
    this.capabilities.set(digest(capability), {
      app: binding.app,
      caller,
      expiresAt,
      device: enrollment.id,
    });
    return {
      capability,
      app: binding.app,
      device: enrollment.id,
      expiresAt: new Date(expiresAt).toISOString(),
    };
  }

  /** Takes a capability for `app` and `caller`; returns the device it was proven with. Throws 403 naming what is missing. */
  consume(capability: string | undefined, app: string, caller: string): string {
    if (capability === undefined)
      throw new ForbiddenError(
        `an exec session needs a device-key step-up capability for app "${app}" (POST /api/v1/exec-sessions/step-up/challenge, then /step-up)`,
        { code: 'step_up_required', details: { missing: 'stepUp', app } },
      );
    this.prune();
    const key = digest(capability);
    const binding = this.capabilities.get(key);
    if (binding === undefined || binding.caller !== caller || binding.app !== app)
      throw new ForbiddenError(
        `the step-up capability is unknown, expired, used, or bound to another app or caller (app "${app}")`,
        { code: 'step_up_invalid', details: { missing: 'stepUp', app } },
      );
    this.capabilities.delete(key);
    return binding.device ?? '';
  }

  private prune(): void {
    const now = this.now();
    for (const map of [this.nonces, this.capabilities])
      for (const [key, binding] of map) if (binding.expiresAt <= now) map.delete(key);
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}
