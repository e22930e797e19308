/**
 * The fleet audit chain of restricted mode: every mutation (token exchange, admission transitions,
 * plans, dispatch, reconciliations, enrollment decisions) appends an entry chained to the previous
 * one by SHA-256 and signed with HMAC-SHA-256 under the audit signing key. Entries never hold a
 * secret: no nonce, token or credential, only ids and digests.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalJson } from '../../domain/canonical-json.js';
import type { Db } from '../../store/database.js';
import { appendAudit, lastAuditHash, listAudit, pruneAudit, type AuditEntry } from '../../store/control/fleet-audit.js';

const GENESIS = '0'.repeat(64);

export class FleetAudit {
  constructor(
    private readonly options: {
      readonly db: Db;
      readonly signingKey: Buffer;
      readonly retentionMs: number;
      readonly now?: () => Date;
    },
  ) {}

  /**
   * Appends one signed entry. The transaction reads the chain's last hash, then writes: it takes the
   * write lock first (`BEGIN IMMEDIATE`), since the host agent writes control.db from its own process.
   */
  record(actor: string, action: string, subject: string, details: Readonly<Record<string, unknown>> = {}): void {
    const db = this.options.db;
    db.transaction(() => {
      const prevSha256 = lastAuditHash(db) ?? GENESIS;
      const at = this.now().toISOString();
      const entrySha256 = createHash('sha256')
        .update(canonicalJson({ prevSha256, at, actor, action, subject, details }))
        .digest('hex');
      appendAudit(db, {
        at,
        actor,
        action,
        subject,
        details,
        prevSha256,
        entrySha256,
        signature: this.sign(entrySha256),
      });
    }).immediate();
  }

  /** Entries newest first. */
  list(filter: { limit: number; offset: number; action?: string }): AuditEntry[] {
    return listAudit(this.options.db, filter);
  }

  /** True when every listed entry's hash and signature hold and each links to the one before it. */
  verify(entries: readonly AuditEntry[]): boolean {
    const ordered = [...entries].sort((a, b) => a.seq - b.seq);
    return ordered.every((e, i) => {
      const hash = createHash('sha256')
        .update(
          canonicalJson({
            prevSha256: e.prevSha256,
            at: e.at,
            actor: e.actor,
            action: e.action,
            subject: e.subject,
            details: e.details,
          }),
        )
        .digest('hex');
      const linked = i === 0 || ordered[i - 1]!.seq !== e.seq - 1 || ordered[i - 1]!.entrySha256 === e.prevSha256;
      return (
        hash === e.entrySha256 && linked && timingSafeEqual(Buffer.from(this.sign(hash)), Buffer.from(e.signature))
      );
    });
  }

  /** Removes entries older than the retention, in bounded batches; returns how many went. */
  prune(batch = 500): number {
    const before = new Date(this.now().getTime() - this.options.retentionMs);
    let total = 0;
    for (;;) {
      const removed = pruneAudit(this.options.db, before, batch);
      total += removed;
      if (removed < batch) return total;
    }
  }

  private sign(hash: string): string {
    return createHmac('sha256', this.options.signingKey).update(hash).digest('hex');
  }

  private now(): Date {
    return (this.options.now ?? (() => new Date()))();
  }
}
