/**
 * The heavy work of a platform backup archive — packing (tar), age encryption or decryption, SHA-256
 * of every byte, and unpacking — in a child process, so the API's event loop never runs it; for a
 * backup (the platform serving) at a lower CPU priority (`nice` 10) and in the lowest best-effort I/O
 * class where the disk's scheduler honours it (docs/adr/0167). What it writes is paced ({@link IoPace}): synced every few MiB, so the
 * kernel never holds a large amount of the archive's dirty data whose writeback would stall the
 * platform's own fsyncs, and written no faster than a configured rate.
 *
 * The child's code is a string run by `node -e`, requiring `tar` and importing `age-encryption` by the
 * paths this module resolves (as the SQLite worker does, ADR 0161): no file to locate, the same from
 * the sources, `dist/` and an installed checkout. A packaged build (one bundle, ADR 0140) has no
 * modules a child can load: there {@link runArchiveTask} answers `undefined` and the caller does the
 * work itself. The operator key goes through the child's stdin, never its arguments; the child exits
 * when that pipe closes, so a parent killed with SIGKILL leaves no child writing.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import type { BackupKey } from './backup-key.js';

/** How fast, and in what steps, the archive's bytes reach the disk. */
export interface IoPace {
  /** fdatasync after this many bytes written to one file (0: only at the end). */
  readonly syncEveryBytes: number;
  /** Bytes written per second at most, over the task (0: no limit). */
  readonly bytesPerSecond: number;
}

/** Bytes between syncs of a paced file. */
export const SYNC_EVERY_BYTES = 8 * 2 ** 20;

/** The pace of `SVC_BACKUP_IO_MBPS` (MB per second; 0: no limit), synced every 8 MiB. */
export function ioPace(mbps: number): IoPace {
  return { syncEveryBytes: SYNC_EVERY_BYTES, bytesPerSecond: mbps * 1_000_000 };
}

/** The default pace (`SVC_BACKUP_IO_MBPS` unset: 32 MB/s, synced every 8 MiB). */
export const DEFAULT_IO_PACE: IoPace = ioPace(32);

/**
 * `background`: a backup while the platform serves (nice 10, lowest best-effort I/O class);
 * `foreground`: a restore, run while the platform is stopped (normal priority).
 */
export type ArchivePriority = 'background' | 'foreground';

/** One file of an archive as read: its path, size and SHA-256. */
export interface ArchiveEntry {
  readonly path: string;
  readonly bytes: number;
  readonly sha256: string;
}

/** A task of the child. */
export type ArchiveTask =
  /** SHA-256 and size of each file. */
  | { readonly kind: 'hash'; readonly files: readonly string[] }
  /** Packs `names` of `folder` (in that order) into `to` (created new), encrypted with the key when given, then fsyncs it. */
  | {
      readonly kind: 'pack';
      readonly folder: string;
      readonly names: readonly string[];
      readonly to: string;
      readonly pace: IoPace;
    }
  /**
   * Reads the archive `file` (decrypted with the key when `age`), hashing every entry; with `into`,
   * writes each file there too (paced). Only files and folders, at relative paths without `..`.
   */
  | {
      readonly kind: 'read';
      readonly file: string;
      readonly sealing: 'age' | 'plain';
      readonly into: string | null;
      readonly pace: IoPace;
    };

/** What each task answers. */
export interface ArchiveTaskResult {
  hash: { readonly files: readonly { readonly bytes: number; readonly sha256: string }[] };
  pack: { readonly bytes: number; readonly sha256: string };
  read: { readonly entries: readonly ArchiveEntry[]; readonly manifest: string | null };
}

/** A task that failed in the child; `code`: `backup_decrypt_failed` (the key does not open it), or `backup_damaged`. */
export class ArchiveTaskError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

const SCRIPT = String.raw`
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { createHash } = require('node:crypto');
const { Readable } = require('node:stream');
class Failure extends Error { constructor(message, code) { super(message); this.code = code; } }
const sleeper = new Int32Array(new SharedArrayBuffer(4));
const PIECE = 2 ** 20;
const parent = process.ppid;
/** The parent was killed (this process was re-parented): stop at once, leaving its .partial to be removed. */
function orphaned() { if (process.ppid !== parent) process.exit(70); }
/** Paced writes of one task: each file synced every pace.syncEveryBytes, the task's bytes at most pace.bytesPerSecond. */
function pacer(pace) {
  const t0 = Date.now();
  let total = 0;
  return {
    open(file, mode) {
      const fd = fs.openSync(file, 'wx', mode);
      let bytes = 0, unsynced = 0;
      return {
        write(buf) {
          // In pieces of at most 1 MiB: a stream's chunk can be many MiB, and the syncs and the rate
          // are kept piece by piece (a sleep stays short, so a closed stdin is seen soon).
          for (let start = 0; start < buf.length; start += PIECE) {
            orphaned();
            const piece = buf.subarray(start, Math.min(buf.length, start + PIECE));
            let off = 0;
            while (off < piece.length) off += fs.writeSync(fd, piece, off, piece.length - off);
            bytes += piece.length; unsynced += piece.length; total += piece.length;
            if (pace.syncEveryBytes > 0 && unsynced >= pace.syncEveryBytes) { fs.fdatasyncSync(fd); unsynced = 0; }
            if (pace.bytesPerSecond > 0) {
              const ahead = (total / pace.bytesPerSecond) * 1000 - (Date.now() - t0);
              if (ahead >= 1) Atomics.wait(sleeper, 0, 0, Math.ceil(ahead));
            }
          }
        },
        close(full) {
          if (full) fs.fsyncSync(fd); else if (unsynced > 0 && pace.syncEveryBytes > 0) fs.fdatasyncSync(fd);
          fs.closeSync(fd);
        },
        get bytes() { return bytes; },
      };
    },
  };
}
async function hashFiles(task) {
  const files = [];
  for (const file of task.files) {
    const hash = createHash('sha256');
    let bytes = 0;
    for await (const chunk of fs.createReadStream(file)) { orphaned(); hash.update(chunk); bytes += chunk.length; }
    files.push({ bytes, sha256: hash.digest('hex') });
  }
  return { files };
}
async function pack(task, key, mods) {
  const packed = Readable.from(mods.tar.create({ cwd: task.folder, portable: true }, task.names));
  let sealed = packed;
  if (key) {
    const e = new mods.age.Encrypter();
    if (key.kind === 'passphrase') { e.setPassphrase(key.passphrase); if (key.scryptLogN !== undefined) e.setScryptWorkFactor(key.scryptLogN); }
    else e.addRecipient(key.recipient);
    sealed = Readable.fromWeb(await e.encrypt(Readable.toWeb(packed)));
  }
  const hash = createHash('sha256');
  const out = pacer(task.pace).open(task.to, 0o600);
  try { for await (const chunk of sealed) { hash.update(chunk); out.write(chunk); } }
  finally { out.close(true); }
  return { bytes: out.bytes, sha256: hash.digest('hex') };
}
async function read(task, key, mods) {
  let source = fs.createReadStream(task.file);
  if (task.sealing === 'age') {
    const d = new mods.age.Decrypter();
    if (key.kind === 'identity') d.addIdentity(key.identity); else d.addPassphrase(key.passphrase);
    try { source = Readable.fromWeb(await d.decrypt(Readable.toWeb(source))); }
    catch (error) { throw new Failure(String(error && error.message || error), 'backup_decrypt_failed'); }
  }
  const paced = pacer(task.pace);
  const entries = [];
  let manifest = null;
  const parser = new mods.tar.Parser({ strict: true });
  let failed;
  const fail = (error) => { if (!failed) failed = error; };
  parser.on('entry', (entry) => {
    const rel = String(entry.path).replace(/\/+$/, '');
    if (failed) return entry.resume();
    if (rel === '' || path.isAbsolute(rel) || rel.split('/').some((p) => p === '..' || p === '.')) {
      fail(new Error('entry ' + JSON.stringify(entry.path) + ' is outside the archive folder')); return entry.resume();
    }
    if (entry.type === 'Directory') {
      if (task.into) fs.mkdirSync(path.join(task.into, rel), { recursive: true, mode: 0o700 });
      return entry.resume();
    }
    if (entry.type !== 'File' && entry.type !== 'OldFile') {
      fail(new Error('entry ' + JSON.stringify(rel) + ' is a ' + entry.type + ', not a file')); return entry.resume();
    }
    const hash = createHash('sha256');
    let bytes = 0;
    let out = null;
    if (task.into) {
      fs.mkdirSync(path.dirname(path.join(task.into, rel)), { recursive: true, mode: 0o700 });
      try { out = paced.open(path.join(task.into, rel), (entry.mode || 0o600) & 0o777); } catch (error) { fail(error); return entry.resume(); }
    }
    const kept = rel === 'manifest.json' ? [] : null;
    entry.on('data', (chunk) => {
      if (failed) return;
      orphaned();
      hash.update(chunk); bytes += chunk.length;
      try { if (out) out.write(chunk); } catch (error) { fail(error); }
      if (kept) kept.push(chunk);
    });
    entry.on('end', () => {
      if (out) { try { out.close(false); } catch (error) { fail(error); } }
      entries.push({ path: rel, bytes, sha256: hash.digest('hex') });
      if (kept) manifest = Buffer.concat(kept).toString('utf8');
    });
  });
  await new Promise((resolve, reject) => {
    parser.on('error', reject);
    source.on('error', reject);
    parser.on('end', resolve);
    source.pipe(parser);
  }).catch((error) => { throw new Failure(String(error && error.message || error), 'backup_damaged'); });
  if (failed) throw new Failure(String(failed.message || failed), 'backup_damaged');
  return { entries, manifest };
}
let input = '';
let started = false;
process.stdin.setEncoding('utf8');
process.stdin.on('end', () => process.exit(70));
process.stdin.on('data', (data) => {
  if (started) return;
  input += data;
  const nl = input.indexOf('\n');
  if (nl < 0) return;
  started = true;
  const { task, key, modules, background } = JSON.parse(input.slice(0, nl));
  input = '';
  if (background) {
    // Below the platform's processes for the CPU, and in the lowest best-effort I/O class (which only
    // the bfq scheduler honours; mq-deadline and none ignore it).
    try { os.setPriority(10); } catch {}
    try { require('node:child_process').execFileSync('ionice', ['-c', '2', '-n', '7', '-p', String(process.pid)], { stdio: 'ignore' }); } catch {}
  }
  (async () => {
    const mods = { tar: require(modules.tar), age: await import(modules.age) };
    const run = task.kind === 'hash' ? hashFiles : task.kind === 'pack' ? pack : read;
    return run(task, key, mods);
  })().then(
    (result) => { process.stdout.write(JSON.stringify({ ok: true, result }) + '\n', () => process.exit(0)); },
    (error) => { process.stdout.write(JSON.stringify({ ok: false, code: error && error.code, message: String(error && error.message || error) }) + '\n', () => process.exit(1)); },
  );
});`;

/** Paths of the modules the child loads, or undefined when they cannot be resolved (a packaged build). */
function modules(): { tar: string; age: string } | undefined {
  try {
    const require = createRequire(import.meta.url);
    return { tar: require.resolve('tar'), age: pathToFileURL(require.resolve('age-encryption')).href };
  } catch {
    return undefined;
  }
}

/**
 * Runs `task` in a low-priority child process; resolves with its result, or `undefined` when no child
 * can load the modules (the caller then does the work itself). Rejects with an {@link ArchiveTaskError}
 * when the task failed, or an Error when the child died without answering.
 */
export function runArchiveTask<K extends ArchiveTask['kind']>(
  task: Extract<ArchiveTask, { kind: K }>,
  key: BackupKey | undefined,
  priority: ArchivePriority,
): Promise<ArchiveTaskResult[K] | undefined> {
  const mods = modules();
  if (mods === undefined) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', SCRIPT], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err = (err + d).slice(-4000)));
    child.stdin.on('error', () => undefined);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      const line = out.trim().split('\n').pop();
      let answer: { ok: boolean; result?: ArchiveTaskResult[K]; code?: string; message?: string } | undefined;
      try {
        answer = line ? (JSON.parse(line) as typeof answer) : undefined;
      } catch {
        answer = undefined;
      }
      if (answer?.ok) resolve(answer.result);
      else if (answer) reject(new ArchiveTaskError(answer.message ?? 'failed', answer.code ?? 'backup_damaged'));
      else
        reject(new Error(`the archive process ended (${signal ?? `exit ${code}`}) without an answer: ${err.trim()}`));
    });
    // The key only through the pipe; stdin stays open: the child exits if it closes early.
    child.stdin.write(
      `${JSON.stringify({ task, key: key ?? null, modules: mods, background: priority === 'background' })}\n`,
    );
  });
}
