/**
 * Audit receipts of the production profile: before a mutation runs, a signed `reserved` receipt names
 * who does what to which target and the target's digest before; a `completed` receipt follows with
 * the outcome and the digest after. Receipts form one hash chain, so a removed or altered receipt
 * breaks it. Receipts hold ids, names and digests only, never a secret value or a request body.
 */
import { UnavailableError } from '../errors.js';

/** The two records of one mutation. */
export const ReceiptPhase = {
  reserved: 'reserved',
  completed: 'completed',
} as const;
export type ReceiptPhase = (typeof ReceiptPhase)[keyof typeof ReceiptPhase];

/** What is reserved before a mutation. */
export interface ReceiptReservation {
  /** Who asks: `control-token`, `token:<name>`, `edge:<subject>`, `worker`, `cli:<user>`. */
  readonly actor: string;
  /** What is done: `app.deploy`, `POST /api/apps/{id}/rollback`, `secrets.rotate-key`. */
  readonly action: string;
  /** What it is done to: `app:<name>`, `tokens`, `platform`, `host-key`. */
  readonly target: string;
  /** SHA-256 of the target's state before, or null where the target has no digestible state. */
  readonly beforeDigest: string | null;
  /** Ids that link this receipt to other records (operation id, request id); never secrets. */
  readonly refs?: Readonly<Record<string, string>>;
}

/** What is recorded once a reserved mutation ended. */
export interface ReceiptCompletion {
  /** `succeeded`, `failed` or `refused`. */
  readonly outcome: 'succeeded' | 'failed' | 'refused';
  readonly afterDigest: string | null;
  /** A short, secret-free note: an HTTP status, an operation id, an error code. */
  readonly refs?: Readonly<Record<string, string>>;
}

/** The signed part of a receipt, in the order it is hashed (canonical JSON sorts it anyway). */
export interface ReceiptBody {
  readonly seq: number;
  readonly phase: ReceiptPhase;
  /** The reservation's id; a completion carries the id of the reservation it completes. */
  readonly receiptId: string;
  readonly at: string;
  readonly actor: string;
  readonly action: string;
  readonly target: string;
  readonly beforeDigest: string | null;
  readonly afterDigest: string | null;
  readonly outcome: ReceiptCompletion['outcome'] | null;
  readonly refs: Readonly<Record<string, string>>;
  /** The previous receipt's `sha256`, or 64 zeros for the first. */
  readonly prevSha256: string;
  /** Which audit key signed it (the first 16 hex digits of the SHA-256 of its public key). */
  readonly keyId: string;
}

/** A stored receipt: its body, the body's SHA-256 and the Ed25519 signature of that hash. */
export interface AuditReceipt extends ReceiptBody {
  readonly sha256: string;
  /** Base64 Ed25519 signature over the ASCII hex `sha256`. */
  readonly signature: string;
}

/** The `prevSha256` of the first receipt. */
export const GENESIS_SHA256 = '0'.repeat(64);

/** A problem `verify` found at one receipt. */
export interface ReceiptProblem {
  readonly seq: number;
  readonly problem: 'hash' | 'signature' | 'chain' | 'sequence' | 'unknown-key' | 'unreadable';
  readonly message: string;
}

/** The verdict over the whole chain. */
export interface ReceiptVerification {
  readonly ok: boolean;
  readonly receipts: number;
  /** Reservations without a completion: mutations interrupted, or still running. */
  readonly open: number;
  readonly problems: readonly ReceiptProblem[];
  readonly headSha256: string;
}

/** Thrown when a receipt cannot be written: the mutation it guards must not run (HTTP 503). */
export class ReceiptUnavailableError extends UnavailableError {
  constructor(message: string, cause?: unknown) {
    super(`the audit receipt could not be written, so nothing was changed: ${message}`, {
      code: 'audit_receipt_unavailable',
      ...(cause === undefined ? {} : { cause }),
    });
  }
}
