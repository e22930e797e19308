/**
 * Audit receipts of the production profile (ADR 0187): the Ed25519 audit key and the receipt log in
 * the data folder, and the digests receipts record. Other profiles keep no receipts.
 */
import fs from 'node:fs';
import { AuditReceipts } from '../../controllers/audit/audit-receipts.js';
import { canonicalDigest } from '../../domain/canonical-json.js';
import { hostIdentityPath } from '../../platform/secrets/age-secrets.js';
import { targetDigest } from '../../controllers/audit/target-digest.js';
import { auditKeyFile, ensureAuditKey } from '../../platform/audit/audit-key.js';
import { ReceiptFile, receiptFile } from '../../platform/audit/receipt-file.js';
import type { Logger } from '../../platform/logger.js';
import type { Db } from '../../store/database.js';

/** Options of `startAuditReceipts`. */
export interface AuditReceiptsWiring {
  readonly profile: string;
  readonly dataDir: string;
  readonly hostedDir: string;
  readonly db: Db;
  readonly logger: Logger;
}

/** The receipts of a production platform; undefined in other profiles. */
export function startAuditReceipts(options: AuditReceiptsWiring): AuditReceipts | undefined {
  if (options.profile !== 'production') return undefined;
  const log = options.logger.child({ component: 'audit-receipts' });
  const key = ensureAuditKey(options.dataDir);
  log.info({ keyId: key.keyId }, 'audit receipts are reserved before mutations');
  return new AuditReceipts({
    file: new ReceiptFile(receiptFile(options.dataDir)),
    key,
    digest: targetDigest({ db: options.db, hostedDir: options.hostedDir }),
    onCompletionLost: (error, receiptId) =>
      log.error(
        { receiptId, err: error instanceof Error ? error.message : String(error) },
        'the completion receipt of a mutation could not be written: its reservation stays open',
      ),
  });
}

/**
 * Receipts for a host command that changes the host's age key (`svc secrets init-key|rotate-key`):
 * kept when the data folder has an audit key (the platform runs production there) or
 * `SVC_PROFILE=production`. The `host-key` digest covers the identity file's public keys only.
 */
export function hostKeyReceipts(dataDir: string, profile: string | undefined): AuditReceipts | undefined {
  if (profile !== 'production' && !fs.existsSync(auditKeyFile(dataDir))) return undefined;
  const identityFile = hostIdentityPath(dataDir);
  return new AuditReceipts({
    file: new ReceiptFile(receiptFile(dataDir)),
    key: ensureAuditKey(dataDir),
    digest: (target) => {
      if (target !== 'host-key') return null;
      let text = '';
      try {
        text = fs.readFileSync(identityFile, 'utf8');
      } catch {
        // No identity yet: the digest of no public keys.
      }
      return canonicalDigest([...text.matchAll(/^# public key: (\S+)$/gm)].map((m) => m[1]));
    },
  });
}
