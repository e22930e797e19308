/**
 * The archive file of a platform backup: a tar of a staged folder, `manifest.json` first, encrypted
 * with age (recipient or passphrase) unless the backup holds no secrets. Written to a `.partial` name,
 * fsynced and renamed, so a file with the final name is always a complete archive. The work runs in a
 * low-priority child process (./archive-process.ts, docs/adr/0167).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { Decrypter, Encrypter } from 'age-encryption';
import * as tar from 'tar';
import { UnprocessableError } from '../../domain/errors.js';
import {
  ArchiveTaskError,
  DEFAULT_IO_PACE,
  runArchiveTask,
  type ArchiveEntry,
  type ArchivePriority,
  type IoPace,
} from './archive-process.js';
import type { BackupKey } from './backup-key.js';

/** The first bytes of an age file. */
const AGE_MAGIC = 'age-encryption.org/v1\n';

/** How an archive file is sealed. */
export type ArchiveSealing = 'age' | 'plain';

/** What {@link writeArchive} wrote. */
export interface WrittenArchive {
  readonly file: string;
  readonly bytes: number;
  /** SHA-256 of the archive file as written. */
  readonly sha256: string;
}

/** An archive that is not a readable svc backup (foreign, corrupt, truncated, wrong key). */
function unreadable(message: string, code: string, cause?: unknown): UnprocessableError {
  return new UnprocessableError(message, { code, ...(cause === undefined ? {} : { cause }) });
}

/**
 * Packs the files of `folder` (`manifest.json` first) into `file`, encrypted to `key` when given.
 * Resolves once the archive is complete under its final name. The packing, encryption and hashing
 * run in a low-priority child process that writes at `pace` (docs/adr/0167); in a packaged build, on
 * this thread.
 */
export async function writeArchive(
  folder: string,
  file: string,
  key: BackupKey | undefined,
  pace: IoPace = DEFAULT_IO_PACE,
): Promise<WrittenArchive> {
  const names = fs.readdirSync(folder).sort((a, b) => (a === 'manifest.json' ? -1 : b === 'manifest.json' ? 1 : 0));
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temp = `${file}.partial`;
  fs.rmSync(temp, { force: true });
  const packed =
    (await runArchiveTask({ kind: 'pack', folder, names, to: temp, pace }, key, 'background')) ??
    (await packHere(folder, names, temp, key));
  fs.renameSync(temp, file);
  syncFolder(path.dirname(file));
  return { file, bytes: packed.bytes, sha256: packed.sha256 };
}

/** {@link writeArchive}'s work on this thread, streamed in chunks (a packaged build: no child can load the modules). */
async function packHere(
  folder: string,
  names: string[],
  temp: string,
  key: BackupKey | undefined,
): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  // node-tar's stream is a Minipass, which web streams do not take: read it as an async iterable.
  const packed = Readable.from(tar.create({ cwd: folder, portable: true }, names));
  const sealed: Readable = key
    ? Readable.fromWeb(
        (await encrypter(key).encrypt(
          Readable.toWeb(packed) as unknown as ReadableStream<Uint8Array>,
        )) as WebReadableStream,
      )
    : packed;
  await pipeline(sealed, hashing(hash), fs.createWriteStream(temp, { mode: 0o600 }));
  const fd = fs.openSync(temp, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  return { bytes: fs.statSync(temp).size, sha256: hash.digest('hex') };
}

/** How `file` is sealed, by its first bytes; throws when it is neither an age file nor a tar. */
export function archiveSealing(file: string): ArchiveSealing {
  const head = Buffer.alloc(512);
  const fd = fs.openSync(file, 'r');
  let read: number;
  try {
    read = fs.readSync(fd, head, 0, 512, 0);
  } finally {
    fs.closeSync(fd);
  }
  if (head.subarray(0, AGE_MAGIC.length).toString('latin1') === AGE_MAGIC) return 'age';
  // A tar header: "ustar" at offset 257, and our first entry is manifest.json.
  if (
    read === 512 &&
    head.subarray(257, 262).toString('latin1') === 'ustar' &&
    head.subarray(0, 13).toString() === 'manifest.json'
  )
    return 'plain';
  throw unreadable(
    `${file} is not an svc platform backup (neither an age-encrypted nor a plain svc archive)`,
    'not_a_backup',
  );
}

/** What {@link readArchive} read. */
export interface ReadArchive {
  readonly sealing: ArchiveSealing;
  /** Every file of the archive with its size and SHA-256, as read. */
  readonly entries: readonly ArchiveEntry[];
  /** The text of the archive's `manifest.json` (null when it has none). */
  readonly manifest: string | null;
  /** Whether the files were written into the folder (always, when `write`; on this thread, always). */
  readonly unpacked: boolean;
}

/**
 * Reads `file` whole, decrypting it with `key` when it is sealed with age, and hashes every file in it;
 * with `write`, unpacks it into `folder` (created empty). In a child process at `pace` and `priority`
 * (docs/adr/0167); in a packaged build on this thread, always unpacked into `folder`.
 * Throws an UnprocessableError when it cannot be read whole (wrong key, corrupt, truncated).
 */
export async function readArchive(
  file: string,
  folder: string,
  key: BackupKey | undefined,
  options: { readonly write: boolean; readonly pace?: IoPace; readonly priority?: ArchivePriority } = { write: true },
): Promise<ReadArchive> {
  const sealing = archiveSealing(file);
  fs.rmSync(folder, { recursive: true, force: true });
  fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
  if (sealing === 'age') {
    if (!key)
      throw unreadable(`${file} is encrypted: give the backup key (SVC_BACKUP_KEY or --key)`, 'backup_key_required');
    if (key.kind === 'recipient')
      throw unreadable(
        'the backup key is an age recipient (age1...), which only encrypts: give its identity (AGE-SECRET-KEY-1...) to read the archive',
        'backup_key_cannot_decrypt',
      );
  }
  let read;
  try {
    read = await runArchiveTask(
      { kind: 'read', file, sealing, into: options.write ? folder : null, pace: options.pace ?? DEFAULT_IO_PACE },
      key,
      options.priority ?? 'foreground',
    );
  } catch (cause) {
    if (cause instanceof ArchiveTaskError && cause.code === 'backup_decrypt_failed')
      throw unreadable(`${file} cannot be decrypted with this key: ${cause.message}`, 'backup_decrypt_failed', cause);
    throw unreadable(`${file} is damaged or truncated: ${(cause as Error).message}`, 'backup_damaged', cause);
  }
  if (read !== undefined) return { sealing, ...read, unpacked: options.write };
  await unpackHere(file, folder, sealing, key);
  const entries: ArchiveEntry[] = [];
  for (const rel of filesIn(folder)) {
    const at = path.join(folder, rel);
    entries.push({ path: rel, bytes: fs.statSync(at).size, sha256: await sha256File(at) });
  }
  const manifest = path.join(folder, 'manifest.json');
  return {
    sealing,
    entries,
    manifest: fs.existsSync(manifest) ? fs.readFileSync(manifest, 'utf8') : null,
    unpacked: true,
  };
}

/** {@link readArchive}'s unpacking on this thread (a packaged build). */
async function unpackHere(
  file: string,
  folder: string,
  sealing: ArchiveSealing,
  key: BackupKey | undefined,
): Promise<void> {
  let source: Readable = fs.createReadStream(file);
  if (sealing === 'age' && key !== undefined && key.kind !== 'recipient') {
    const decrypter = new Decrypter();
    if (key.kind === 'identity') decrypter.addIdentity(key.identity);
    else decrypter.addPassphrase(key.passphrase);
    try {
      source = Readable.fromWeb(
        (await decrypter.decrypt(Readable.toWeb(source) as unknown as ReadableStream<Uint8Array>)) as WebReadableStream,
      );
    } catch (cause) {
      throw unreadable(
        `${file} cannot be decrypted with this key: ${(cause as Error).message}`,
        'backup_decrypt_failed',
        cause,
      );
    }
  }
  try {
    await extractInto(source, folder);
  } catch (cause) {
    throw unreadable(`${file} is damaged or truncated: ${(cause as Error).message}`, 'backup_damaged', cause);
  }
}

/**
 * SHA-256 and size of each file, in a low-priority child process (docs/adr/0167); on this thread in
 * a packaged build.
 */
export async function hashFiles(files: readonly string[]): Promise<{ bytes: number; sha256: string }[]> {
  const hashed = await runArchiveTask({ kind: 'hash', files }, undefined, 'background');
  if (hashed !== undefined) return [...hashed.files];
  const out: { bytes: number; sha256: string }[] = [];
  for (const file of files) out.push({ bytes: fs.statSync(file).size, sha256: await sha256File(file) });
  return out;
}

/** SHA-256 of a file, streamed on this thread. */
export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of fs.createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The files below `dir`, as relative paths with `/`, sorted. */
function filesIn(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...filesIn(dir, rel));
    else if (entry.isFile()) out.push(rel);
  }
  return out.sort();
}

/** Unpacks a tar stream into `folder`; node-tar's Unpack is a Minipass, which `pipeline` does not wait for. */
function extractInto(source: Readable, folder: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const unpack = tar.extract({ cwd: folder, strict: true, preservePaths: false });
    source.on('error', reject);
    unpack.on('error', reject);
    unpack.on('close', () => resolve());
    source.pipe(unpack);
  });
}

function encrypter(key: BackupKey): Encrypter {
  const e = new Encrypter();
  if (key.kind === 'passphrase') {
    e.setPassphrase(key.passphrase);
    if (key.scryptLogN !== undefined) e.setScryptWorkFactor(key.scryptLogN);
  } else e.addRecipient(key.recipient);
  return e;
}

function hashing(hash: ReturnType<typeof createHash>): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
}

function syncFolder(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
