/**
 * Audit receipts reserved before mutations (the production profile, ADR 0187): `guard` writes a
 * signed `reserved` receipt, runs the mutation only once it is on disk, then writes the `completed`
 * receipt with the outcome and the target's digest after. `verify` checks every hash, signature and
 * link of the chain.
 */
import { randomUUID, sign, verify as verifySignature, type KeyObject } from 'node:crypto';
import { canonicalDigest } from '../../domain/canonical-json.js';
import { isCallerError } from '../../domain/errors.js';
import {
  GENESIS_SHA256,
  ReceiptUnavailableError,
  type AuditReceipt,
  type ReceiptBody,
  type ReceiptCompletion,
  type ReceiptProblem,
  type ReceiptReservation,
  type ReceiptVerification,
} from '../../domain/audit/audit-receipt.js';
import type { AuditKey } from '../../platform/audit/audit-key.js';
import type { ReceiptFile } from '../../platform/audit/receipt-file.js';

/** Reads a target's current digest (`app:<name>`, `tokens`, ...); null when it has no state to digest. */
export type TargetDigest = (target: string) => string | null;

/** What `guard` needs to know about one mutation. */
export interface GuardedMutation<T> {
  readonly reservation: Omit<ReceiptReservation, 'beforeDigest'>;
  /** Runs the mutation; only called once the reservation is on disk. */
  readonly run: () => Promise<T>;
  /** Secret-free references taken from the result (an operation id, a status). */
  readonly refsOf?: (result: T) => Readonly<Record<string, string>>;
  /** How a result that resolved should be recorded (an HTTP 4xx answer is `refused`). @default succeeded */
  readonly outcomeOf?: (result: T) => ReceiptCompletion['outcome'];
}

/** Options of `AuditReceipts`. */
export interface AuditReceiptsOptions {
  readonly file: ReceiptFile;
  readonly key: AuditKey;
  readonly digest: TargetDigest;
  /** Told when a completion could not be written (the mutation already ran; its reservation stays open). */
  readonly onCompletionLost?: (error: unknown, receiptId: string) => void;
  readonly now?: () => Date;
}

/** A receipt's own fields (the chain adds seq, time, link and key). */
type ReceiptFields = Omit<ReceiptBody, 'seq' | 'at' | 'prevSha256' | 'keyId'>;

/** The signed receipt chain. */
export class AuditReceipts {
  constructor(private readonly options: AuditReceiptsOptions) {}

  /** The key id and public key (PEM) receipts are signed with. */
  get publicKey(): { keyId: string; pem: string } {
    return { keyId: this.options.key.keyId, pem: this.options.key.publicKeyPem };
  }

  /** The current digest of `target` (what a reservation records as before). */
  digestOf(target: string): string | null {
    return this.options.digest(target);
  }

  /**
   * Writes a `reserved` receipt and returns its id.
   * @throws ReceiptUnavailableError when it cannot be written: the caller must not mutate.
   */
  reserve(reservation: ReceiptReservation): string {
    const receiptId = randomUUID();
    try {
      this.#append(reservedFields(receiptId, reservation, reservation.beforeDigest));
    } catch (error) {
      throw new ReceiptUnavailableError(error instanceof Error ? error.message : String(error), error);
    }
    return receiptId;
  }

  /** Writes the `completed` receipt of `receiptId` with the target's digest now. */
  complete(
    receiptId: string,
    reservation: Omit<ReceiptReservation, 'beforeDigest'>,
    completion: Omit<ReceiptCompletion, 'afterDigest'>,
  ): void {
    try {
      this.#append(completedFields(receiptId, reservation, completion, this.options.digest(reservation.target)));
    } catch (error) {
      this.options.onCompletionLost?.(error, receiptId);
    }
  }

  /**
   * Reserves, runs `run` only once the receipt is on disk, and completes with the outcome (on disk
   * before `guard` returns). Each receipt is appended with the others of its event-loop turn under
   * one lock and flushed by one fdatasync off the event loop, shared by the guards in flight
   * (ADR 0194), not by an fsync each on it.
   */
  async guard<T>(mutation: GuardedMutation<T>): Promise<T> {
    const { reservation } = mutation;
    const receiptId = randomUUID();
    try {
      await this.#appendGrouped(reservedFields(receiptId, reservation, this.options.digest(reservation.target)));
    } catch (error) {
      throw new ReceiptUnavailableError(error instanceof Error ? error.message : String(error), error);
    }
    let result: T;
    try {
      result = await mutation.run();
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      await this.#completeGrouped(receiptId, reservation, {
        outcome: isCallerError(error) ? 'refused' : 'failed',
        refs: typeof code === 'string' ? { error: code } : {},
      });
      throw error;
    }
    await this.#completeGrouped(receiptId, reservation, {
      outcome: mutation.outcomeOf?.(result) ?? 'succeeded',
      refs: mutation.refsOf?.(result) ?? {},
    });
    return result;
  }

  /** {@link complete}, flushed by the shared fdatasync. */
  async #completeGrouped(
    receiptId: string,
    reservation: Omit<ReceiptReservation, 'beforeDigest'>,
    completion: Omit<ReceiptCompletion, 'afterDigest'>,
  ): Promise<void> {
    try {
      await this.#appendGrouped(
        completedFields(receiptId, reservation, completion, this.options.digest(reservation.target)),
      );
    } catch (error) {
      this.options.onCompletionLost?.(error, receiptId);
    }
  }

  /** Receipts newest first, optionally of one target or one reservation. */
  list(filter: { limit: number; offset: number; target?: string; receiptId?: string }): AuditReceipt[] {
    const all = this.#read().filter(
      (r): r is AuditReceipt =>
        r !== undefined &&
        (filter.target === undefined || r.target === filter.target) &&
        (filter.receiptId === undefined || r.receiptId === filter.receiptId),
    );
    return all.reverse().slice(filter.offset, filter.offset + filter.limit);
  }

  /** Checks every receipt's hash and signature and that each links to the one before it. */
  verify(): ReceiptVerification {
    const keys = new Map<string, KeyObject>([[this.options.key.keyId, this.options.key.publicKey]]);
    const problems: ReceiptProblem[] = [];
    const openIds = new Set<string>();
    let prev = GENESIS_SHA256;
    let expectedSeq = 1;
    const receipts = this.#read();
    receipts.forEach((receipt, index) => {
      if (receipt === undefined) {
        problems.push({ seq: expectedSeq, problem: 'unreadable', message: `line ${index + 1} is not a receipt` });
        expectedSeq += 1;
        return;
      }
      const { sha256, signature, ...body } = receipt;
      if (receipt.seq !== expectedSeq)
        problems.push({
          seq: receipt.seq,
          problem: 'sequence',
          message: `receipt ${receipt.seq} follows ${expectedSeq - 1}: receipts between them are missing`,
        });
      if (receipt.prevSha256 !== prev)
        problems.push({
          seq: receipt.seq,
          problem: 'chain',
          message: `receipt ${receipt.seq} does not link to the receipt before it (removed or altered)`,
        });
      const hash = canonicalDigest(body);
      if (hash !== sha256)
        problems.push({ seq: receipt.seq, problem: 'hash', message: `receipt ${receipt.seq} was altered` });
      const key = keys.get(receipt.keyId);
      if (key === undefined)
        problems.push({
          seq: receipt.seq,
          problem: 'unknown-key',
          message: `receipt ${receipt.seq} names key ${receipt.keyId}, not this platform's audit key`,
        });
      else if (!safeVerify(key, sha256, signature))
        problems.push({
          seq: receipt.seq,
          problem: 'signature',
          message: `receipt ${receipt.seq} has a bad signature`,
        });
      if (receipt.phase === 'reserved') openIds.add(receipt.receiptId);
      else openIds.delete(receipt.receiptId);
      prev = sha256;
      expectedSeq = receipt.seq + 1;
    });
    return { ok: problems.length === 0, receipts: receipts.length, open: openIds.size, problems, headSha256: prev };
  }

  /** Appends a receipt, fsynced before it returns. */
  #append(fields: ReceiptFields): void {
    this.options.file.append(this.#line(fields));
  }

  /** Appends a receipt with the others of its event-loop turn; resolves once they are on disk. */
  async #appendGrouped(fields: ReceiptFields): Promise<void> {
    await this.options.file.appendDurably(this.#line(fields));
  }

  /** Builds the signed line of `fields` after the line before it. */
  #line(fields: ReceiptFields): (last: string | undefined) => string {
    const key = this.options.key;
    return (last) => {
      const previous = last === undefined ? undefined : (JSON.parse(last) as AuditReceipt);
      const body: ReceiptBody = {
        ...fields,
        seq: (previous?.seq ?? 0) + 1,
        at: (this.options.now ?? (() => new Date()))().toISOString(),
        prevSha256: previous?.sha256 ?? GENESIS_SHA256,
        keyId: key.keyId,
      };
      const sha256 = canonicalDigest(body);
      const signature = sign(null, Buffer.from(sha256), key.privateKey).toString('base64');
      return JSON.stringify({ ...body, sha256, signature } satisfies AuditReceipt);
    };
  }

  #read(): (AuditReceipt | undefined)[] {
    return this.options.file.lines().map((line) => {
      try {
        const parsed = JSON.parse(line) as AuditReceipt;
        return typeof parsed.seq === 'number' && typeof parsed.sha256 === 'string' ? parsed : undefined;
      } catch {
        return undefined;
      }
    });
  }
}

function safeVerify(key: KeyObject, sha256: string, signature: string): boolean {
  try {
    return verifySignature(null, Buffer.from(sha256), key, Buffer.from(signature, 'base64'));
  } catch {
    return false;
  }
}

/** The fields of a `reserved` receipt. */
function reservedFields(
  receiptId: string,
  reservation: Omit<ReceiptReservation, 'beforeDigest'>,
  beforeDigest: string | null,
): ReceiptFields {
  return {
    phase: 'reserved',
    receiptId,
    actor: reservation.actor,
    action: reservation.action,
    target: reservation.target,
    beforeDigest,
    afterDigest: null,
    outcome: null,
    refs: reservation.refs ?? {},
  };
}

/** The fields of a `completed` receipt, with the target's digest now. */
function completedFields(
  receiptId: string,
  reservation: Omit<ReceiptReservation, 'beforeDigest'>,
  completion: Omit<ReceiptCompletion, 'afterDigest'>,
  afterDigest: string | null,
): ReceiptFields {
  return {
    phase: 'completed',
    receiptId,
    actor: reservation.actor,
    action: reservation.action,
    target: reservation.target,
    beforeDigest: null,
    afterDigest,
    outcome: completion.outcome,
    refs: completion.refs ?? {},
  };
}
