/**
 * The platform's image-signing key (ADR 0223): an Ed25519 OpenPGP key made once under
 * `<dataDir>/containers/signing`, and where the signatures and policy files live.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DomainError } from '../../domain/errors.js';
import { gpgArgs, runTool, toolFailed, withGpgAgentStopped } from './signing-tools.js';

/** Where the signing key, the signatures and the containers-policy files live under a data folder. */
export interface ImageSignatureLayout {
  /** `<dataDir>/containers`. */
  readonly base: string;
  /** The signing key's folder (0700). */
  readonly signing: string;
  /** `GNUPGHOME` of the signing key. */
  readonly gnupgHome: string;
  /** The platform's public key, ASCII-armored: what another host or an operator trusts. */
  readonly publicKey: string;
  readonly fingerprintFile: string;
  /** The signatures of pushed images (c/image lookaside layout). */
  readonly signatures: string;
  /** The registries.d folder: where signatures of the managed registry are written and read. */
  readonly registriesDir: string;
  /** The verification policy: signatures by a trusted key, for the managed registry only. */
  readonly policy: string;
  /** The push policy: the platform's own image storage as source. */
  readonly pushPolicy: string;
}

/** The files of image signing under `dataDir`. */
export function imageSignatureLayout(dataDir: string): ImageSignatureLayout {
  const base = path.join(dataDir, 'containers');
  const signing = path.join(base, 'signing');
  return {
    base,
    signing,
    gnupgHome: path.join(signing, 'gnupg'),
    publicKey: path.join(signing, 'public-key.asc'),
    fingerprintFile: path.join(signing, 'fingerprint'),
    signatures: path.join(base, 'signatures'),
    registriesDir: path.join(base, 'registries.d'),
    policy: path.join(base, 'policy.json'),
    pushPolicy: path.join(base, 'push-policy.json'),
  };
}

/** The platform's image-signing key. */
export interface ImageSigningKey {
  /** `GNUPGHOME` holding the secret key. */
  readonly gnupgHome: string;
  /** Full OpenPGP fingerprint (40 hex digits, upper case). */
  readonly fingerprint: string;
  /** The public key, ASCII-armored. */
  readonly publicKeyPath: string;
}

/**
 * Creates the platform's signing key under `<dataDir>/containers/signing` when there is none (an
 * Ed25519 OpenPGP key, no expiry) and returns it; `outcome` says whether it was made now. The key has
 * no passphrase: one kept beside it would protect nothing; the folder's mode (0700, files 0600) does.
 */
export async function ensureImageSigningKey(
  dataDir: string,
): Promise<ImageSigningKey & { readonly outcome: 'created' | 'unchanged' }> {
  const layout = imageSignatureLayout(dataDir);
  const existing = readSigningKey(layout);
  if (existing) return { ...existing, outcome: 'unchanged' };
  if (fs.existsSync(layout.signing))
    throw new DomainError(
      'unavailable',
      'image_signing_key_incomplete',
      `image-signing key folder ${layout.signing} lacks its fingerprint or public key: restore it from a backup, or remove it to make a new key (images signed by the old one then need the old public key as an extra trusted key)`,
    );
  fs.mkdirSync(layout.base, { recursive: true, mode: 0o700 });
  // Made in a folder of its own, then renamed into place: a crash leaves no half-made key.
  const staging = fs.mkdtempSync(path.join(layout.base, '.signing-'));
  try {
    const home = path.join(staging, 'gnupg');
    fs.mkdirSync(home, { mode: 0o700 });
    const fingerprint = await withGpgAgentStopped(home, async () => {
      const created = await runTool(
        'gpg',
        [
          ...gpgArgs(home),
          '--status-fd=1',
          '--pinentry-mode=loopback',
          '--passphrase=',
          '--quick-generate-key',
          'svc image signing <image-signing@svc.invalid>',
          'ed25519',
          'sign',
          'never',
        ],
        { timeoutMs: 60_000 },
      );
      const fpr = /^\[GNUPG:\] KEY_CREATED \w+ ([0-9A-F]{40})$/m.exec(created.stdout)?.[1];
      if (!created.ok || fpr === undefined) throw toolFailed('creation of the image-signing key', created);
      const exported = await runTool('gpg', [...gpgArgs(home), '--armor', '--export', fpr]);
      if (!exported.ok || !exported.stdout.includes('BEGIN PGP PUBLIC KEY BLOCK'))
        throw toolFailed('export of the image-signing public key', exported);
      fs.writeFileSync(path.join(staging, path.basename(layout.publicKey)), exported.stdout, { mode: 0o600 });
      return fpr;
    });
    fs.writeFileSync(path.join(staging, path.basename(layout.fingerprintFile)), `${fingerprint}\n`, { mode: 0o600 });
    fs.renameSync(staging, layout.signing);
  } catch (error) {
    fs.rmSync(staging, { recursive: true, force: true });
    const raced = readSigningKey(layout);
    if (raced) return { ...raced, outcome: 'unchanged' };
    throw error;
  }
  const key = readSigningKey(layout);
  if (!key) throw new Error(`image-signing key missing in ${layout.signing} right after its creation`);
  return { ...key, outcome: 'created' };
}

/** The signing key under `layout`, or undefined when it was never made. */
function readSigningKey(layout: ImageSignatureLayout): ImageSigningKey | undefined {
  try {
    const fingerprint = fs.readFileSync(layout.fingerprintFile, 'utf8').trim();
    if (!/^[0-9A-F]{40}$/.test(fingerprint) || !fs.existsSync(layout.publicKey)) return undefined;
    return { gnupgHome: layout.gnupgHome, fingerprint, publicKeyPath: layout.publicKey };
  } catch {
    return undefined;
  }
}
