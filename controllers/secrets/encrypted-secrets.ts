/**
 * Secrets committed encrypted with age as `secrets/<KEY>.age` in the app's source (docs/secrets.md):
 * the inspect step's checks, and their delivery at deploy into the app's secrets folder
 * `<dataDir>/secrets/<app>/<KEY>` (mode 0600), from which the local driver copies them into each
 * task's `secrets/` folder. A record of which keys came encrypted, and from which commit, lets the
 * secret migration plan report the true status. No value ever leaves these functions.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { CanonicalAppSpec } from '../../domain/spec/index.js';
import {
  decryptSecret,
  ENCRYPTED_SECRET_SUFFIX,
  hostIdentityPath,
  isAgeCiphertext,
  readIdentities,
} from '../../platform/secrets/age-secrets.js';
import { StepFailure } from '../errors.js';

/** The folder of committed secrets in an app's source. */
export const COMMITTED_SECRETS_FOLDER = 'secrets';

/** One finding of the inspect step (the shape of `InspectFinding`). */
export interface EncryptedSecretFinding {
  readonly severity: 'error' | 'warning';
  readonly rule: string;
  readonly message: string;
}

/** A committed encrypted secret: its key and its file in the checkout. */
export interface CommittedSecret {
  readonly key: string;
  readonly file: string;
}

/** The `secrets/<KEY>.age` files of a checkout, in key order. */
export function committedEncryptedSecrets(workDir: string): CommittedSecret[] {
  const dir = path.join(workDir, COMMITTED_SECRETS_FOLDER);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((name) => name.endsWith(ENCRYPTED_SECRET_SUFFIX) && name.length > ENCRYPTED_SECRET_SUFFIX.length)
    .sort()
    .map((name) => ({ key: name.slice(0, -ENCRYPTED_SECRET_SUFFIX.length), file: path.join(dir, name) }));
}

/**
 * Inspect-step rules for committed secrets: `secret.not-encrypted` for a `secrets/<KEY>.age` that
 * is not an age file, `secret.plaintext-committed` for a declared key committed as `secrets/<KEY>`,
 * `secret.undeclared-encrypted` for an encrypted file whose key `secrets:` does not declare.
 */
export function inspectCommittedSecrets(spec: CanonicalAppSpec, workDir: string): EncryptedSecretFinding[] {
  const findings: EncryptedSecretFinding[] = [];
  const declared = new Set(spec.secrets);
  for (const secret of committedEncryptedSecrets(workDir)) {
    const relative = `${COMMITTED_SECRETS_FOLDER}/${secret.key}${ENCRYPTED_SECRET_SUFFIX}`;
    const stat = fs.lstatSync(secret.file);
    if (!stat.isFile() || !isAgeCiphertext(fs.readFileSync(secret.file)))
      findings.push({
        severity: 'error',
        rule: 'secret.not-encrypted',
        message: `${relative} is declared encrypted (.age) but is not an age-encrypted file; encrypt it with "svc secrets encrypt" and commit the result`,
      });
    if (!declared.has(secret.key))
      findings.push({
        severity: 'error',
        rule: 'secret.undeclared-encrypted',
        message: `${relative} is committed but secrets: does not declare ${secret.key}`,
      });
  }
  for (const key of spec.secrets) {
    const plain = path.join(workDir, COMMITTED_SECRETS_FOLDER, key);
    if (fs.existsSync(plain))
      findings.push({
        severity: 'error',
        rule: 'secret.plaintext-committed',
        message: `${COMMITTED_SECRETS_FOLDER}/${key} holds the value of a declared secret in plain text in the repository; encrypt it to ${COMMITTED_SECRETS_FOLDER}/${key}${ENCRYPTED_SECRET_SUFFIX}, delete the plain file and rotate the value`,
      });
  }
  return findings;
}

/** Whether a declared key has a committed encrypted value in the checkout. */
export function hasCommittedEncrypted(workDir: string, key: string): boolean {
  return fs.existsSync(path.join(workDir, COMMITTED_SECRETS_FOLDER, `${key}${ENCRYPTED_SECRET_SUFFIX}`));
}

/** Where the deploy records which keys of an app came from committed encrypted files. */
export function encryptedSourcesFile(dataDir: string, app: string): string {
  return path.join(dataDir, 'secret-sources', `${app}.json`);
}

/** The record of one delivered encrypted key: commit and ciphertext digest, never the value. */
export interface EncryptedSource {
  readonly source: string;
  readonly commit: string | null;
  readonly ciphertextSha256: string;
  readonly deliveredAt: string;
}

/** The keys of an app delivered from committed encrypted files at its last deploy. */
export function readEncryptedSources(dataDir: string, app: string): Record<string, EncryptedSource> {
  try {
    return JSON.parse(fs.readFileSync(encryptedSourcesFile(dataDir, app), 'utf8')) as Record<string, EncryptedSource>;
  } catch {
    return {};
  }
}

function writeAtomic(file: string, contents: Uint8Array | string, mode: number): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${crypto.randomUUID()}.tmp`;
  fs.writeFileSync(temp, contents, { mode });
  fs.chmodSync(temp, mode);
  fs.renameSync(temp, file);
}

/**
 * Decrypts the checkout's committed secrets with the host identity into the app's secrets folder
 * (mode 0600; a file whose content is unchanged is not rewritten) and records their sources.
 * Answers the step message (key names only), or undefined when the app commits no encrypted secret.
 */
export async function deliverEncryptedSecrets(options: {
  readonly dataDir: string;
  readonly app: string;
  readonly spec: CanonicalAppSpec;
  readonly workDir: string;
  readonly commit: string | null;
}): Promise<string | undefined> {
  const committed = committedEncryptedSecrets(options.workDir);
  if (committed.length === 0) return undefined;
  const declared = new Set(options.spec.secrets);
  const undeclared = committed.filter((s) => !declared.has(s.key)).map((s) => s.key);
  if (undeclared.length > 0)
    throw new StepFailure(
      `secrets/${undeclared.join(ENCRYPTED_SECRET_SUFFIX + ', secrets/')}${ENCRYPTED_SECRET_SUFFIX} committed but not declared in secrets:`,
    );
  for (const secret of committed) {
    if (!isAgeCiphertext(fs.readFileSync(secret.file)))
      throw new StepFailure(
        `secrets/${secret.key}${ENCRYPTED_SECRET_SUFFIX} is not an age-encrypted file (rule secret.not-encrypted)`,
      );
  }
  const identityFile = hostIdentityPath(options.dataDir);
  const identities = readIdentities(identityFile);
  if (identities.length === 0)
    throw new StepFailure(
      `the app commits encrypted secrets but the host has no age identity at ${identityFile}; run "svc secrets init-key"`,
    );
  const values = new Map<string, Uint8Array>();
  const sources: Record<string, EncryptedSource> = {};
  const now = new Date().toISOString();
  for (const secret of committed) {
    const ciphertext = fs.readFileSync(secret.file);
    try {
      values.set(secret.key, await decryptSecret(identities, ciphertext));
    } catch {
      // The cause may quote the file; only the key name is reported.
      throw new StepFailure(
        `secrets/${secret.key}${ENCRYPTED_SECRET_SUFFIX} does not decrypt with the host identity (encrypted to another key?)`,
      );
    }
    sources[secret.key] = {
      source: `secrets/${secret.key}${ENCRYPTED_SECRET_SUFFIX}`,
      commit: options.commit,
      ciphertextSha256: crypto.createHash('sha256').update(ciphertext).digest('hex'),
      deliveredAt: now,
    };
  }
  const folder = path.join(options.dataDir, 'secrets', options.app);
  const changed: string[] = [];
  for (const [key, value] of values) {
    const file = path.join(folder, key);
    let current: Buffer | undefined;
    try {
      current = fs.readFileSync(file);
    } catch {
      current = undefined;
    }
    if (current !== undefined && current.equals(value)) continue;
    writeAtomic(file, value, 0o600);
    changed.push(key);
  }
  writeAtomic(encryptedSourcesFile(options.dataDir, options.app), JSON.stringify(sources, null, 2) + '\n', 0o600);
  const keys = [...values.keys()];
  return `decrypted ${keys.length} secret(s) into the app's secrets folder: ${keys.join(', ')} (${changed.length} changed)`;
}
