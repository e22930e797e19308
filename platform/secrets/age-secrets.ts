/**
 * Secrets committed encrypted with age (https://age-encryption.org, the `age-encryption` package):
 * the host identity file, encryption to the host recipient, decryption at deploy, and rotation of
 * the host key. Values pass through these functions only; none of them logs or returns one
 * anywhere else.
 */
import fs from 'node:fs';
import path from 'node:path';
import { armor, Decrypter, Encrypter, generateX25519Identity, identityToRecipient } from 'age-encryption';

/** First line of an armored age file. */
const ARMOR_BEGIN = '-----BEGIN AGE ENCRYPTED FILE-----';
/** First line of a binary age file. */
const BINARY_BEGIN = 'age-encryption.org/v1\n';

/** The suffix of a committed encrypted secret: `secrets/<KEY>.age` in the app's source. */
export const ENCRYPTED_SECRET_SUFFIX = '.age';

/** The host identity file under the data folder: `<dataDir>/keys/age-identity.txt`, owner-only. */
export function hostIdentityPath(dataDir: string): string {
  return path.join(dataDir, 'keys', 'age-identity.txt');
}

/** Whether `bytes` are an age file (armored or binary), judged by its header only. */
export function isAgeCiphertext(bytes: Uint8Array): boolean {
  const head = Buffer.from(bytes.subarray(0, 64)).toString('latin1');
  return head.trimStart().startsWith(ARMOR_BEGIN) || head.startsWith(BINARY_BEGIN);
}

/** The identities (`AGE-SECRET-KEY-1...`) of an identity file, newest first; [] when the file does not exist. */
export function readIdentities(file: string): string[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('AGE-SECRET-KEY-'));
}

function writePrivate(file: string, contents: string | Uint8Array): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, contents, { mode: 0o600 });
  fs.renameSync(temp, file);
}

function identityFileText(identities: readonly { identity: string; recipient: string; note: string }[]): string {
  return identities.map((i) => `# ${i.note}\n# public key: ${i.recipient}\n${i.identity}\n`).join('');
}

/** The host identity's public key (its recipient), creating the identity file (mode 0600) when absent. */
export async function ensureHostIdentity(file: string): Promise<{ recipient: string; created: boolean }> {
  const existing = readIdentities(file)[0];
  if (existing) return { recipient: await identityToRecipient(existing), created: false };
  const identity = await generateX25519Identity();
  const recipient = await identityToRecipient(identity);
  writePrivate(file, identityFileText([{ identity, recipient, note: `created ${new Date().toISOString()}` }]));
  return { recipient, created: true };
}

/** Encrypts `value` to the recipients (`age1...`); answers an armored age file. */
export async function encryptSecret(recipients: readonly string[], value: string | Uint8Array): Promise<string> {
  const encrypter = new Encrypter();
  for (const recipient of recipients) encrypter.addRecipient(recipient);
  return armor.encode(await encrypter.encrypt(value));
}

/** Decrypts an armored or binary age file with any of the identities. */
export async function decryptSecret(identities: readonly string[], ciphertext: Uint8Array): Promise<Uint8Array> {
  const decrypter = new Decrypter();
  for (const identity of identities) decrypter.addIdentity(identity);
  const text = Buffer.from(ciphertext.subarray(0, 64)).toString('latin1');
  const binary = text.trimStart().startsWith(ARMOR_BEGIN)
    ? armor.decode(Buffer.from(ciphertext).toString('utf8'))
    : ciphertext;
  return decrypter.decrypt(binary);
}

/** What a host key rotation did. */
export interface RotationReceipt {
  readonly recipient: string;
  readonly previousRecipient: string;
  /** The encrypted files rewritten for the new key. */
  readonly reencrypted: readonly string[];
  /** Whether the previous identity stays in the file (to deploy commits made before the rotation). */
  readonly keptPrevious: boolean;
}

/**
 * Rotates the host key: a new identity becomes the first of the file, every file in `files` is
 * decrypted with the current identities and re-encrypted to the new recipient (each written
 * atomically), and the previous identities stay after the new one unless `dropPrevious`. All
 * files are decrypted before anything is written: one that does not decrypt stops the rotation.
 */
export async function rotateHostIdentity(
  file: string,
  files: readonly string[],
  options: { readonly dropPrevious?: boolean } = {},
): Promise<RotationReceipt> {
  const current = readIdentities(file);
  if (current.length === 0) throw new Error(`${file} holds no age identity to rotate`);
  const plain = new Map<string, Uint8Array>();
  for (const encrypted of files) {
    try {
      plain.set(encrypted, await decryptSecret(current, fs.readFileSync(encrypted)));
    } catch (cause) {
      throw new Error(`${encrypted} does not decrypt with the host identity; nothing was rotated`, { cause });
    }
  }
  const identity = await generateX25519Identity();
  const recipient = await identityToRecipient(identity);
  const previousRecipient = await identityToRecipient(current[0]!);
  const previous = await Promise.all(
    current.map(async (old) => ({
      identity: old,
      recipient: await identityToRecipient(old),
      note: 'previous identity (kept to deploy commits encrypted before the rotation)',
    })),
  );
  const fresh = { identity, recipient, note: `created ${new Date().toISOString()} by rotation` };
  // The new identity is saved before any file is encrypted to it: a crash never leaves a file
  // that no saved identity opens.
  writePrivate(file, identityFileText([fresh, ...previous]));
  for (const [encrypted, value] of plain) writePrivateKeepMode(encrypted, await encryptSecret([recipient], value));
  if (options.dropPrevious) writePrivate(file, identityFileText([fresh]));
  return { recipient, previousRecipient, reencrypted: [...plain.keys()], keptPrevious: !options.dropPrevious };
}

function writePrivateKeepMode(file: string, contents: string): void {
  const mode = fs.statSync(file).mode & 0o777;
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, contents, { mode });
  fs.renameSync(temp, file);
}
