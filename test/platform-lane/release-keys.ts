/**
 * Keys and detached signatures for the release policy's tests, made with the real `openssl`
 * command (as a release publisher would), and release archives shaped like the artifact.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** Key algorithms a release may be signed with. */
export type KeyAlgorithm = 'ed25519' | 'rsa' | 'ec';

/** A key pair in PEM files. */
export interface KeyPair {
  readonly privateKey: string;
  readonly publicKey: string;
  readonly algorithm: KeyAlgorithm;
}

const GENPKEY: Record<KeyAlgorithm, string[]> = {
  ed25519: ['-algorithm', 'ed25519'],
  rsa: ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048'],
  ec: ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256'],
};

/** A new key pair `<dir>/<name>.pem` and `<dir>/<name>.pub.pem`. */
export function opensslKeyPair(dir: string, name: string, algorithm: KeyAlgorithm): KeyPair {
  const privateKey = path.join(dir, `${name}.pem`);
  const publicKey = path.join(dir, `${name}.pub.pem`);
  execFileSync('openssl', ['genpkey', ...GENPKEY[algorithm], '-out', privateKey], { stdio: 'ignore' });
  execFileSync('openssl', ['pkey', '-in', privateKey, '-pubout', '-out', publicKey], { stdio: 'ignore' });
  return { privateKey, publicKey, algorithm };
}

/** Signs `file` into `<file>.sig` (or `out`): Ed25519 over the bytes, RSA and ECDSA over their SHA-256; base64 text when asked. */
export function opensslSign(key: KeyPair, file: string, options: { out?: string; base64?: boolean } = {}): string {
  const out = options.out ?? `${file}.sig`;
  const raw = `${out}.raw`;
  if (key.algorithm === 'ed25519')
    execFileSync('openssl', ['pkeyutl', '-sign', '-inkey', key.privateKey, '-rawin', '-in', file, '-out', raw], {
      stdio: 'ignore',
    });
  else execFileSync('openssl', ['dgst', '-sha256', '-sign', key.privateKey, '-out', raw, file], { stdio: 'ignore' });
  if (options.base64) {
    fs.writeFileSync(out, `${fs.readFileSync(raw).toString('base64')}\n`);
    fs.rmSync(raw);
  } else fs.renameSync(raw, out);
  return out;
}

/** `sha256:<hex>` of a public key file's DER form, computed by openssl and sha256sum. */
export function opensslFingerprint(publicKey: string): string {
  const der = execFileSync('openssl', ['pkey', '-pubin', '-in', publicKey, '-outform', 'DER']);
  return `sha256:${execFileSync('sha256sum', { input: der }).toString().split(' ')[0]}`;
}

/** A small archive shaped like the artifact (`svc-<version>-<target>/` with a script `svc` and `svc-release.json`) at `<dir>/<name>`. */
export function fakeArtifact(
  dir: string,
  options: { commit: string | null; name?: string; version?: string; target?: string },
): string {
  const version = options.version ?? '0.1.0';
  const target = options.target ?? `${process.platform}-${process.arch}`;
  const work = fs.mkdtempSync(path.join(dir, '.fake-'));
  const folder = path.join(work, `svc-${version}-${target}`);
  fs.mkdirSync(folder, { recursive: true });
  fs.writeFileSync(path.join(folder, 'svc'), '#!/bin/sh\necho svc\n', { mode: 0o755 });
  fs.writeFileSync(
    path.join(folder, 'svc-release.json'),
    JSON.stringify({
      name: 'svc',
      version,
      commit: options.commit,
      target,
      node: process.version,
      builtAt: '2026-01-01T00:00:00.000Z',
    }),
  );
  const archive = path.join(dir, options.name ?? `svc-${version}-${target}.tar.gz`);
  execFileSync('tar', ['-C', work, '-czf', archive, path.basename(folder)]);
  fs.rmSync(work, { recursive: true, force: true });
  return archive;
}
