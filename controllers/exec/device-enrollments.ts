/**
 * Device enrollment on the full control plane (ADR 0169): the keys exec step-ups are signed with.
 * The same table and routes as restricted mode's (ADR 0154): a device asks with its PEM public key
 * and stays pending until an administrator approves or rejects it. Only the key's SHA-256 is kept:
 * the step-up sends the key with its signature and is checked against that digest.
 */
import { createHash, createPublicKey, randomBytes } from 'node:crypto';
import { ConflictError, NotFoundError, ValidationError } from '../../domain/errors.js';
import type { Db } from '../../store/database.js';
import {
  decideEnrollment,
  enrollmentByKey,
  getEnrollment,
  insertEnrollment,
  listEnrollments,
  type DeviceEnrollment,
} from '../../store/control/fleet-records.js';

export type { DeviceEnrollment };

export class DeviceEnrollments {
  constructor(private readonly db: Db) {}

  /** A pending enrollment of `publicKey` (PEM, SPKI). */
  request(name: string, publicKey: string, requestedBy: string): DeviceEnrollment {
    try {
      createPublicKey(publicKey);
    } catch {
      throw new ValidationError('publicKey is not a PEM public key (SPKI)', {
        code: 'invalid_public_key',
        details: { field: 'publicKey' },
      });
    }
    const fingerprint = createHash('sha256').update(publicKey.trim()).digest('hex');
    const existing = enrollmentByKey(this.db, fingerprint);
    if (existing !== undefined)
      throw new ConflictError(`this device key is already enrolled (${existing.state})`, {
        code: 'device_already_enrolled',
        details: { id: existing.id, state: existing.state },
      });
    const id = `dev_${randomBytes(8).toString('hex')}`;
    insertEnrollment(this.db, {
      id,
      name,
      publicKeySha256: fingerprint,
      requestedBy,
      requestedAt: new Date().toISOString(),
    });
    return getEnrollment(this.db, id)!;
  }

  list(): DeviceEnrollment[] {
    return listEnrollments(this.db);
  }

  get(id: string): DeviceEnrollment {
    const e = getEnrollment(this.db, id);
    if (e === undefined)
      throw new NotFoundError(`no device enrollment ${id}`, { code: 'enrollment_not_found', details: { id } });
    return e;
  }

  decide(id: string, decision: 'approved' | 'rejected', by: string): DeviceEnrollment {
    const current = this.get(id);
    if (!decideEnrollment(this.db, id, decision, by, new Date()))
      throw new ConflictError(`enrollment ${id} is already ${current.state}`, {
        code: 'enrollment_already_decided',
        details: { id, state: current.state },
      });
    return this.get(id);
  }
}
