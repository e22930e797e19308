/**
 * Detached signatures of release artifacts (ADR 0142): `SVC_RELEASE_PUBLIC_KEY` (PEM text or the
 * path of a PEM file) and `<archive>.sig`, a signature over the archive's exact bytes, raw or
 * base64. Ed25519 and Ed448 sign the bytes themselves; RSA (PKCS #1 v1.5), RSA-PSS and ECDSA
 * (DER) sign their SHA-256. A key is named by its fingerprint, never printed.
 */
import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import type { SignatureCheck } from '../../domain/platform/index.js';

/** A loaded public key and the name it is shown by. */
export interface ReleasePublicKey {
  readonly key: KeyObject;
  /** `sha256:<hex>` of the key's DER SubjectPublicKeyInfo (`openssl pkey -pubin -outform DER | sha256sum`). */
  readonly fingerprint: string;
}

const SUPPORTED: ReadonlySet<string> = new Set(['ed25519', 'ed448', 'rsa', 'rsa-pss', 'ec']);

/**
 * Reads `value`: PEM text when it holds `-----BEGIN` (literal `\n` sequences, as in an environment
 * file, are read as line breaks), else the path of a PEM file. Throws a message without the key.
 */
export function loadReleasePublicKey(value: string): ReleasePublicKey {
  let pem: string;
  if (value.includes('-----BEGIN')) pem = value.replace(/\\n/g, '\n');
  else {
    try {
      pem = fs.readFileSync(value, 'utf8');
    } catch (error) {
      throw new Error(
        `the public key file ${value} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); give a PEM public key or the path of a PEM file`,
      );
    }
  }
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: 'pem' });
  } catch {
    throw new Error(
      'is not a PEM public key (-----BEGIN PUBLIC KEY----- ...); a private key or a certificate is refused too',
    );
  }
  if (pem.includes('PRIVATE KEY'))
    throw new Error('holds a private key: give the public key only (openssl pkey -pubout)');
  const type = key.asymmetricKeyType ?? 'unknown';
  if (!SUPPORTED.has(type))
    throw new Error(`is a ${type} key, which cannot verify signatures here: use Ed25519, Ed448, RSA, RSA-PSS or ECDSA`);
  return { key, fingerprint: keyFingerprint(key) };
}

/** `sha256:<hex>` of the DER SubjectPublicKeyInfo. */
export function keyFingerprint(key: KeyObject): string {
  return `sha256:${createHash('sha256')
    .update(key.export({ type: 'spki', format: 'der' }))
    .digest('hex')}`;
}

/** The signature bytes of a `.sig` file: base64 text when it is all base64, else the raw bytes. */
export function signatureBytes(content: Buffer): Buffer {
  const text = content.toString('latin1').replace(/\s+/g, '');
  if (text.length > 0 && text.length % 4 === 0 && /^[A-Za-z0-9+/]+={0,2}$/.test(text))
    return Buffer.from(text, 'base64');
  return content;
}

/** Checks `signatureFile` (when there is one) over `data` with `publicKey`. */
export function checkSignature(
  data: Buffer,
  signatureFile: string,
  publicKey: ReleasePublicKey,
  named: string,
): SignatureCheck {
  const by = `signature by key ${publicKey.fingerprint}`;
  let content: Buffer;
  try {
    content = fs.readFileSync(signatureFile);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      return {
        state: 'missing',
        message: `${named} is unsigned: no ${signatureFile.slice(signatureFile.lastIndexOf('/') + 1)} beside it`,
      };
    return { state: 'invalid', message: `${signatureFile} cannot be read: ${(error as Error).message}` };
  }
  const type = publicKey.key.asymmetricKeyType;
  const algorithm = type === 'ed25519' || type === 'ed448' ? null : 'sha256';
  let ok = false;
  try {
    ok = verify(algorithm, data, publicKey.key, signatureBytes(content));
  } catch {
    ok = false;
  }
  return ok
    ? { state: 'valid', message: `${by}: valid over ${named}` }
    : {
        state: 'invalid',
        message: `${by}: does not verify over ${named} (signed by another key, over other bytes, or damaged)`,
      };
}
