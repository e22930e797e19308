/**
 * The operator key of platform backups (`SVC_BACKUP_KEY`): an age identity (`AGE-SECRET-KEY-1...`,
 * encrypts and decrypts), an age recipient (`age1...`, encrypts only: a restore needs the identity),
 * a passphrase, or the path of a file holding one of these. Never logged or returned.
 */
import fs from 'node:fs';
import { identityToRecipient } from 'age-encryption';

/** A parsed operator key. */
export type BackupKey =
  | { readonly kind: 'identity'; readonly identity: string; readonly recipient: string }
  | { readonly kind: 'recipient'; readonly recipient: string }
  | {
      readonly kind: 'passphrase';
      readonly passphrase: string;
      /** scrypt work factor (log2 N) of new archives; @default age's (18, about a second per archive) */
      readonly scryptLogN?: number;
    };

/** Parses `raw` (the key, or `@file`/an existing absolute path holding it). */
export async function parseBackupKey(raw: string): Promise<BackupKey> {
  let text = raw.trim();
  if (text.startsWith('@') || (text.startsWith('/') && fs.existsSync(text)))
    text = fs
      .readFileSync(text.replace(/^@/, ''), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'))[0]!;
  if (text === undefined || text === '') throw new Error('the backup key is empty');
  if (/^AGE-SECRET-KEY-1[0-9A-Z]+$/.test(text))
    return { kind: 'identity', identity: text, recipient: await identityToRecipient(text) };
  if (/^age1[0-9a-z]+$/.test(text)) return { kind: 'recipient', recipient: text };
  if (text.length < 12) throw new Error('a backup passphrase must have at least 12 characters');
  return { kind: 'passphrase', passphrase: text };
}

/** Whether `key` can decrypt what it encrypts (a recipient alone cannot). */
export function canDecrypt(key: BackupKey): boolean {
  return key.kind !== 'recipient';
}
