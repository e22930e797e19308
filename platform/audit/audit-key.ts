/**
 * The platform's audit key: one Ed25519 key pair in `<dataDir>/keys/audit-ed25519.pem` (PKCS#8,
 * mode 0600 in the 0700 keys folder), created on first use. Receipts carry the key id, so a verifier
 * holding only the public key (`svc audit verify` prints it) can check them.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** The loaded audit key. */
export interface AuditKey {
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  /** First 16 hex digits of the SHA-256 of the public key's SPKI DER. */
  readonly keyId: string;
  /** The public key as SPKI PEM, for verifiers elsewhere. */
  readonly publicKeyPem: string;
}

/** Where the audit key lives under a data folder. */
export function auditKeyFile(dataDir: string): string {
  return path.join(dataDir, 'keys', 'audit-ed25519.pem');
}

/** Loads the audit key, creating it (owner-only) when the data folder has none. */
export function ensureAuditKey(dataDir: string): AuditKey {
  const file = auditKeyFile(dataDir);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  if (!fs.existsSync(file)) {
    const { privateKey } = generateKeyPairSync('ed25519');
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' });
    // Written aside and linked in place: two processes starting at once keep the first key.
    const temp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(temp, pem, { mode: 0o600 });
    try {
      fs.linkSync(temp, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      fs.rmSync(temp, { force: true });
    }
  }
  fs.chmodSync(file, 0o600);
  const privateKey = createPrivateKey(fs.readFileSync(file));
  const publicKey = createPublicKey(privateKey);
  return {
    privateKey,
    publicKey,
    keyId: auditKeyId(publicKey),
    publicKeyPem: String(publicKey.export({ type: 'spki', format: 'pem' })),
  };
}

/** The id receipts name their key by. */
export function auditKeyId(publicKey: KeyObject): string {
  return createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('hex')
    .slice(0, 16);
}
