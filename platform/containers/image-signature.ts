/**
 * Image signatures bound to the resolved commit (ADR 0223): the platform signs each image it pushes
 * to the managed registry with its own OpenPGP key ("simple signing", as `podman push --sign-by`
 * does), keeps the signatures in a lookaside folder of its data folder, and before it runs an image
 * verifies, through a containers-policy `policy.json` of its own, that the image is signed by a key
 * it trusts and that its `org.opencontainers.image.revision` label names the commit.
 *
 * Everything goes through skopeo, as it takes the policy, the registries.d folder and the
 * registries.conf as flags; podman 4.3 has no flag for a registries.d folder. Nothing is written
 * to `/etc/containers`. Debian's podman and skopeo are built without sigstore signing ("sigstore
 * disabled"), hence OpenPGP keys.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DomainError, NotFoundError, ValidationError } from '../../domain/errors.js';
import { writeFileAtomic } from '../files/write-file-atomic.js';
import { imageSignatureLayout, type ImageSigningKey } from './image-signing-key.js';
import { gpgArgs, readText, runTool, toolFailed, withGpgAgentStopped } from './signing-tools.js';

export { ensureImageSigningKey, imageSignatureLayout } from './image-signing-key.js';
export type { ImageSignatureLayout, ImageSigningKey } from './image-signing-key.js';

/** The OCI label that names the commit an image was built from. */
export const IMAGE_REVISION_LABEL = 'org.opencontainers.image.revision';

/** Options of {@link writeImageSignatureConfig}. */
export interface ImageSignatureConfigOptions {
  readonly dataDir: string;
  /** `127.0.0.1:<port>` of the managed registry. */
  readonly registryHost: string;
  /** The platform's registries.conf (`writeRegistriesConf`): the managed registry is plain HTTP. */
  readonly registriesConf: string;
  /** The platform's key, always trusted. */
  readonly signingKey: ImageSigningKey;
  /**
   * OpenPGP public keys (armored or binary files) also trusted for images in the managed registry:
   * an operator's key for images built and signed elsewhere. @default []
   */
  readonly extraTrustedKeyPaths?: readonly string[];
}

/** The platform's containers-policy configuration, as {@link writeImageSignatureConfig} wrote it. */
export interface ImageSignatureConfig {
  readonly registryHost: string;
  readonly registriesConf: string;
  readonly registriesDir: string;
  readonly policy: string;
  readonly pushPolicy: string;
  readonly signatures: string;
  /** Fingerprints of the trusted keys, the platform's first. */
  readonly trustedFingerprints: readonly string[];
  /** Whether any file was written. */
  readonly outcome: 'created' | 'updated' | 'unchanged';
}

/**
 * Writes the policy files and the registries.d entry of the managed registry under
 * `<dataDir>/containers`, rewriting only those that differ. The verification policy rejects every
 * image but those of the managed registry signed by a trusted key.
 */
export async function writeImageSignatureConfig(options: ImageSignatureConfigOptions): Promise<ImageSignatureConfig> {
  const layout = imageSignatureLayout(options.dataDir);
  const keyPaths = [options.signingKey.publicKeyPath];
  const trustedFingerprints = [options.signingKey.fingerprint];
  for (const file of options.extraTrustedKeyPaths ?? []) {
    keyPaths.push(path.resolve(file));
    trustedFingerprints.push(...(await publicKeyFingerprints(options.signingKey.gnupgHome, file)));
  }
  fs.mkdirSync(layout.signatures, { recursive: true, mode: 0o700 });
  const lookaside = pathToFileURL(layout.signatures).href;
  const files: [string, string][] = [
    [
      path.join(layout.registriesDir, 'svc-managed-registry.yaml'),
      [
        '# Written by svc at each start (ADR 0223); edits are replaced.',
        'docker:',
        `  ${JSON.stringify(options.registryHost)}:`,
        `    lookaside: ${JSON.stringify(lookaside)}`,
        `    lookaside-staging: ${JSON.stringify(lookaside)}`,
        '',
      ].join('\n'),
    ],
    [
      layout.policy,
      policyJson({
        docker: {
          [options.registryHost]: [
            {
              type: 'signedBy',
              keyType: 'GPGKeys',
              ...(keyPaths.length === 1 ? { keyPath: keyPaths[0] } : { keyPaths }),
              signedIdentity: { type: 'matchRepoDigestOrExact' },
            },
          ],
        },
      }),
    ],
    [layout.pushPolicy, policyJson({ 'containers-storage': { '': [{ type: 'insecureAcceptAnything' }] } })],
  ];
  let written = 0;
  let existed = 0;
  for (const [file, text] of files) {
    const current = readText(file);
    if (current !== undefined) existed += 1;
    if (current === text) continue;
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    writeFileAtomic(file, text, 0o600);
    written += 1;
  }
  return {
    registryHost: options.registryHost,
    registriesConf: options.registriesConf,
    registriesDir: layout.registriesDir,
    policy: layout.policy,
    pushPolicy: layout.pushPolicy,
    signatures: layout.signatures,
    trustedFingerprints,
    outcome: written === 0 ? 'unchanged' : existed === 0 ? 'created' : 'updated',
  };
}

function policyJson(transports: Record<string, unknown>): string {
  return `${JSON.stringify({ default: [{ type: 'reject' }], transports }, null, 2)}\n`;
}

/** The fingerprints of the public keys in `file`; throws when it holds none. */
async function publicKeyFingerprints(gnupgHome: string, file: string): Promise<string[]> {
  if (!fs.existsSync(file))
    throw new ValidationError(`trusted image key ${file}: no such file`, { code: 'image_trusted_key_invalid' });
  const shown = await withGpgAgentStopped(gnupgHome, () =>
    runTool('gpg', [...gpgArgs(gnupgHome), '--with-colons', '--show-keys', file]),
  );
  const fingerprints: string[] = [];
  let inPublicKey = false;
  for (const line of shown.stdout.split('\n')) {
    const fields = line.split(':');
    if (fields[0] === 'pub') inPublicKey = true;
    else if (fields[0] === 'fpr' && inPublicKey) {
      fingerprints.push(fields[9] ?? '');
      inPublicKey = false;
    } else if (fields[0] === 'sub') inPublicKey = false;
  }
  if (!shown.ok || fingerprints.length === 0)
    throw new ValidationError(`trusted image key ${file} holds no OpenPGP public key`, {
      code: 'image_trusted_key_invalid',
    });
  return fingerprints;
}

/** Options of {@link pushSignedImage}. */
export interface SignedPushOptions {
  readonly config: ImageSignatureConfig;
  readonly signingKey: ImageSigningKey;
  /** The image in the platform's (podman's) local storage: a name such as `<registry>/<app>:<sha>`. */
  readonly source: string;
  /** `<registry>/<repository>:<tag>` in the managed registry. */
  readonly destination: string;
  /** Longest push. @default 10 minutes */
  readonly timeoutMs?: number;
}

/** An image in the managed registry, by digest. */
export interface PushedImage {
  /** `<registry>/<repository>@sha256:<hex>`. */
  readonly image: string;
  readonly digest: string;
}

/**
 * Pushes a local image to the managed registry and signs it with the platform's key in the same copy
 * (`skopeo copy --sign-by`), the signature going to the platform's lookaside folder.
 */
export async function pushSignedImage(options: SignedPushOptions): Promise<PushedImage> {
  const { config, signingKey } = options;
  const repository = managedRepository(config, options.destination, 'destination');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-signed-push-'));
  try {
    // podman's push skips the layers its blob cache knows the registry holds (a signed `skopeo copy`
    // compresses every layer again: seconds for a base image); the signature is made beside it.
    const digestFile = path.join(work, 'digest');
    const pushed = await runTool(
      'podman',
      ['push', '--quiet', '--digestfile', digestFile, options.source, `docker://${options.destination}`],
      { timeoutMs: options.timeoutMs ?? 10 * 60_000, env: { CONTAINERS_REGISTRIES_CONF: config.registriesConf } },
    );
    if (!pushed.ok) throw toolFailed(`push of ${options.source} to ${options.destination}`, pushed);
    const digest = readText(digestFile)?.trim() ?? '';
    if (!/^sha256:[0-9a-f]{64}$/.test(digest))
      throw new DomainError('unavailable', 'image_push_failed', `push to ${options.destination} reported no digest`);
    // The manifest exactly as the registry serves it: the signature covers its digest.
    const repositoryPath = repository.slice(config.registryHost.length + 1);
    const response = await fetch(`http://${config.registryHost}/v2/${repositoryPath}/manifests/${digest}`, {
      headers: { accept: MANIFEST_TYPES },
    });
    const manifest = Buffer.from(await response.arrayBuffer());
    if (!response.ok)
      throw new DomainError(
        'unavailable',
        'image_push_failed',
        `the registry does not serve ${repository}@${digest} it just took`,
      );
    const manifestFile = path.join(work, 'manifest.json');
    fs.writeFileSync(manifestFile, manifest);
    // The lookaside layout of containers/image: <repository path>@sha256=<hex>/signature-1.
    const folder = path.join(config.signatures, `${repositoryPath}@${digest.replace(':', '=')}`);
    fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
    const signed = await withGpgAgentStopped(signingKey.gnupgHome, () =>
      runTool(
        'skopeo',
        [
          'standalone-sign',
          '--output',
          path.join(folder, 'signature-1'),
          manifestFile,
          options.destination,
          signingKey.fingerprint,
        ],
        { timeoutMs: 60_000, env: { GNUPGHOME: signingKey.gnupgHome } },
      ),
    );
    if (!signed.ok) throw toolFailed(`signature of ${repository}@${digest}`, signed);
    return { image: `${repository}@${digest}`, digest };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** The manifest types a registry may answer with, as a pull asks for them. */
const MANIFEST_TYPES =
  'application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json';

/** Options of {@link verifyImageSignature}. */
export interface ImageVerificationOptions {
  readonly config: ImageSignatureConfig;
  /** `<registry>/<repository>@sha256:<hex>` in the managed registry. */
  readonly image: string;
  /** The resolved commit the image must have been built from. */
  readonly commit: string;
  /** Longest check. @default 2 minutes */
  readonly timeoutMs?: number;
}

/**
 * Checks that `image` is signed by a trusted key, through the platform's policy.json, and that its
 * revision label names `commit`. Throws {@link ValidationError} `image_signature_invalid` or
 * `image_revision_mismatch`; {@link NotFoundError} `image_not_found` when the registry lacks it.
 *
 * skopeo 1.9 has no verify-only command for a registry image, so the image is copied onto itself by
 * digest, signatures dropped: the policy is evaluated before anything is copied, and the copy moves no
 * layer (each is there) and writes back the same manifest.
 */
export async function verifyImageSignature(options: ImageVerificationOptions): Promise<void> {
  const { config, image } = options;
  managedRepository(config, image, 'image');
  if (!/@sha256:[0-9a-f]{64}$/.test(image))
    throw new ValidationError(`image ${image} is not named by digest (<registry>/<repository>@sha256:<hex>)`, {
      code: 'image_reference_invalid',
    });
  const timeoutMs = options.timeoutMs ?? 120_000;
  const checked = await runTool(
    'skopeo',
    [
      ...skopeoGlobalArgs(config, config.policy),
      'copy',
      '--quiet',
      '--remove-signatures',
      '--preserve-digests',
      `docker://${image}`,
      `docker://${image}`,
    ],
    { timeoutMs },
  );
  if (!checked.ok) {
    const rejected = /Source image rejected: (.*)/.exec(checked.stderr)?.[1];
    if (rejected !== undefined) {
      const signer = /Fingerprint:\\?"([0-9A-F]{16,40})\\?"/.exec(rejected)?.[1];
      const trusted = signer !== undefined && config.trustedFingerprints.some((fpr) => fpr.endsWith(signer));
      const reason =
        signer === undefined
          ? rejected.replace(/"$/, '').slice(0, 300)
          : trusted
            ? `its signature by key ${signer} does not match the image`
            : `it is signed by key ${signer}, which is not trusted`;
      throw new ValidationError(
        `image ${image} is not signed by a key the platform trusts: ${reason}; expected a signature by ${config.trustedFingerprints.join(' or ')}`,
        { code: 'image_signature_invalid', details: { image, trustedFingerprints: config.trustedFingerprints } },
      );
    }
    if (/manifest unknown|name unknown/i.test(checked.stderr))
      throw new NotFoundError(`image ${image} is not in the managed registry`, { code: 'image_not_found' });
    throw toolFailed(`signature check of image ${image}`, checked);
  }
  const inspected = await runTool(
    'skopeo',
    [...skopeoGlobalArgs(config), 'inspect', '--no-tags', `docker://${image}`],
    {
      timeoutMs,
    },
  );
  if (!inspected.ok) throw toolFailed(`inspection of image ${image}`, inspected);
  const labels = (JSON.parse(inspected.stdout) as { Labels?: Record<string, string> | null }).Labels ?? {};
  const revision = labels[IMAGE_REVISION_LABEL];
  if (revision !== options.commit)
    throw new ValidationError(
      revision === undefined
        ? `image ${image} has no ${IMAGE_REVISION_LABEL} label; expected commit ${options.commit}`
        : `image ${image} was built from commit ${revision}, not from the resolved commit ${options.commit}`,
      { code: 'image_revision_mismatch', details: { image, expected: options.commit, actual: revision ?? null } },
    );
}

/** The `<registry>/<repository>` of `reference`; throws unless it is in the managed registry. */
function managedRepository(config: ImageSignatureConfig, reference: string, what: string): string {
  const match = /^([^/]+)\/([a-z0-9]+(?:[._/-][a-z0-9]+)*)(?::[\w][\w.-]{0,127}|@sha256:[0-9a-f]{64})$/.exec(reference);
  if (!match)
    throw new ValidationError(`${what} ${reference} is not <registry>/<repository>:<tag> or @sha256:<digest>`, {
      code: 'image_reference_invalid',
    });
  if (match[1] !== config.registryHost)
    throw new ValidationError(
      `${what} ${reference} is not in the managed registry ${config.registryHost}: signatures are kept and checked for it only`,
      { code: what === 'image' ? 'image_signature_invalid' : 'image_reference_invalid' },
    );
  return `${match[1]}/${match[2]}`;
}

function skopeoGlobalArgs(config: ImageSignatureConfig, policy?: string): string[] {
  return [
    ...(policy === undefined ? [] : ['--policy', policy]),
    '--registries.d',
    config.registriesDir,
    '--registries-conf',
    config.registriesConf,
  ];
}
