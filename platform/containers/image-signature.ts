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
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DomainError, NotFoundError, ValidationError } from '../../domain/errors.js';
import { writeFileAtomic } from '../files/write-file-atomic.js';

/** The OCI label that names the commit an image was built from. */
export const IMAGE_REVISION_LABEL = 'org.opencontainers.image.revision';

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
    const digestFile = path.join(work, 'digest');
    const pushed = await withGpgAgentStopped(signingKey.gnupgHome, () =>
      runTool(
        'skopeo',
        [
          ...skopeoGlobalArgs(config, config.pushPolicy),
          'copy',
          '--quiet',
          '--sign-by',
          signingKey.fingerprint,
          '--digestfile',
          digestFile,
          `containers-storage:${options.source}`,
          `docker://${options.destination}`,
        ],
        { timeoutMs: options.timeoutMs ?? 10 * 60_000, env: { GNUPGHOME: signingKey.gnupgHome } },
      ),
    );
    if (!pushed.ok) throw toolFailed(`signed push of ${options.source} to ${options.destination}`, pushed);
    const digest = readText(digestFile)?.trim() ?? '';
    if (!/^sha256:[0-9a-f]{64}$/.test(digest))
      throw new DomainError(
        'unavailable',
        'image_push_failed',
        `signed push to ${options.destination} reported no digest`,
      );
    return { image: `${repository}@${digest}`, digest };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

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

function gpgArgs(home: string): string[] {
  return ['--homedir', home, '--batch', '--no-tty', '--quiet'];
}

/** Live operations per GNUPGHOME: its agent is stopped when the last one ends. */
const agentUsers = new Map<string, number>();

/**
 * Runs `work`, which may start a gpg-agent for `home` (gpg starts one for any secret-key operation),
 * and stops that agent once no other operation of this process uses it: nothing stays running.
 */
async function withGpgAgentStopped<T>(home: string, work: () => Promise<T>): Promise<T> {
  checkAgentSocketRoom(home);
  agentUsers.set(home, (agentUsers.get(home) ?? 0) + 1);
  try {
    return await work();
  } finally {
    const left = (agentUsers.get(home) ?? 1) - 1;
    if (left > 0) agentUsers.set(home, left);
    else {
      agentUsers.delete(home);
      await runTool('gpgconf', ['--homedir', home, '--kill', 'gpg-agent'], { timeoutMs: 10_000 });
    }
  }
}

/** Longest unix socket path (`sun_path` less its NUL). */
const MAX_SOCKET_PATH = 107;

/**
 * gpg-agent listens in its GNUPGHOME unless `/run/user/<uid>` exists; a socket path longer than a
 * unix socket allows makes every gpg operation fail with "No agent running", so say why at once.
 */
function checkAgentSocketRoom(home: string): void {
  const socket = path.join(home, 'S.gpg-agent.browser');
  if (socket.length <= MAX_SOCKET_PATH || fs.existsSync(`/run/user/${process.getuid?.() ?? 0}`)) return;
  throw new DomainError(
    'unavailable',
    'image_signing_path_too_long',
    `image-signing key folder ${home} is too deep for gpg-agent: its socket ${socket} is ${socket.length} bytes, over the ${MAX_SOCKET_PATH} a unix socket allows; use a shorter data folder path, or create /run/user/${process.getuid?.() ?? 0} so gpg puts its sockets there`,
  );
}

interface ToolResult {
  readonly ok: boolean;
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function runTool(
  program: string,
  args: readonly string[],
  options: { timeoutMs?: number; env?: Record<string, string> } = {},
): Promise<ToolResult> {
  return new Promise((resolve) => {
    execFile(
      program,
      args,
      {
        env: { ...process.env, ...options.env },
        timeout: options.timeoutMs ?? 60_000,
        maxBuffer: 16 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ ok: !error, code, stdout, stderr: error && !stderr ? error.message : stderr });
      },
    ).stdin?.end();
  });
}

function toolFailed(what: string, result: ToolResult): DomainError {
  const output = `${result.stdout}${result.stderr}`.trim().slice(-2000);
  return new DomainError(
    'unavailable',
    'image_signature_tool_failed',
    `${what} failed (exit ${String(result.code)}): ${output}`,
  );
}

function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
