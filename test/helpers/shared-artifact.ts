/**
 * The release artifact (`packageArtifact()`), built once per ava run and shared by the test files
 * that need it. ava runs each test file in a child process of one ava process, so the folder is
 * named after that process (`<tmp>/svc-shared-artifact-<ppid>/`): the first file to ask takes the
 * lock (`lock`, O_EXCL) and builds into `out/`, then writes `done` (what was built, as JSON) or
 * `failed` (why); the others wait for either. The builder removes folders of ava processes that are
 * gone, and leaves a small reaper (`tail --pid`) that removes this run's folder when its ava
 * process exits.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { packageArtifact, type PackagedArtifact } from '../../scripts/package/package-artifact.js';
import { fileSha256 } from '../../platform/platform-lane/index.js';
import { signalReaches } from '../../platform/host/signal-reaches.js';

/** What was built, and how long the build took (in the test file that built it). */
export type SharedArtifact = PackagedArtifact & { readonly buildMs: number };

const PREFIX = 'svc-shared-artifact-';

let shared: Promise<SharedArtifact> | undefined;

/** The folder of this ava run's artifact. */
export function sharedArtifactDir(): string {
  return path.join(os.tmpdir(), `${PREFIX}${process.ppid}`);
}

/** The artifact of this ava run: built by the first test file that asks, awaited by the others. */
export function sharedArtifact(options: { timeoutMs?: number } = {}): Promise<SharedArtifact> {
  shared ??= obtain(options.timeoutMs ?? 600_000);
  return shared;
}

/** Removes the folders of earlier ava runs whose process is gone (a run killed before its reaper ran). */
function removeStale(): void {
  for (const name of fs.readdirSync(os.tmpdir())) {
    const pid = name.startsWith(PREFIX) ? Number(name.slice(PREFIX.length)) : NaN;
    if (Number.isInteger(pid) && pid > 0 && !signalReaches(pid))
      fs.rmSync(path.join(os.tmpdir(), name), { recursive: true, force: true });
  }
}

async function obtain(timeoutMs: number): Promise<SharedArtifact> {
  const dir = sharedArtifactDir();
  fs.mkdirSync(dir, { recursive: true });
  let builder = false;
  try {
    fs.writeFileSync(path.join(dir, 'lock'), String(process.pid), { flag: 'wx' });
    builder = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  if (!builder) return waitForBuild(dir, timeoutMs);
  removeStale();
  // Removes the folder once the ava process is gone (tail --pid waits for a process that is not its parent).
  const reaper = spawn('/bin/sh', ['-c', 'tail --pid="$0" -f /dev/null; rm -rf "$1"', String(process.ppid), dir], {
    detached: true,
    stdio: 'ignore',
  });
  reaper.unref();
  try {
    const started = Date.now();
    const built: SharedArtifact = {
      // Packed fast: the tests unpack it once or twice, and the level changes nothing else.
      ...(await packageArtifact({ outDir: path.join(dir, 'out'), gzipLevel: 1 })),
      buildMs: Date.now() - started,
    };
    publish(dir, 'done', JSON.stringify(built));
    return built;
  } catch (error) {
    publish(dir, 'failed', (error as Error).stack ?? String(error));
    throw error;
  }
}

/** Writes a marker atomically (a watcher sees it whole). */
function publish(dir: string, name: string, content: string): void {
  const temp = path.join(dir, `.${name}-${process.pid}`);
  fs.writeFileSync(temp, content);
  fs.renameSync(temp, path.join(dir, name));
}

/** Resolves when `done` or `failed` appears in `dir` (watched, then checked, so no event is missed). */
function waitForBuild(dir: string, timeoutMs: number): Promise<SharedArtifact> {
  return new Promise((resolve, reject) => {
    const check = (): boolean => {
      const failed = path.join(dir, 'failed');
      if (fs.existsSync(failed)) {
        finish();
        reject(new Error(`the shared artifact build failed in another test file:\n${fs.readFileSync(failed, 'utf8')}`));
        return true;
      }
      const done = path.join(dir, 'done');
      if (!fs.existsSync(done)) return false;
      finish();
      resolve(JSON.parse(fs.readFileSync(done, 'utf8')) as SharedArtifact);
      return true;
    };
    const watcher = fs.watch(dir, () => void check());
    const timer = setTimeout(() => {
      finish();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for the shared artifact in ${dir}`));
    }, timeoutMs);
    const finish = () => {
      watcher.close();
      clearTimeout(timer);
    };
    check();
  });
}

/**
 * A second, distinct artifact from `built`: the same folder repacked with another `builtAt` in
 * svc-release.json (another tree fingerprint, so another release id), into `outDir` with its
 * `.sha256`; `manifest` overrides other fields of svc-release.json (a `commit`).
 */
export async function repackedArtifact(
  built: Pick<PackagedArtifact, 'archive'>,
  outDir: string,
  builtAt: string,
  manifest: Record<string, unknown> = {},
): Promise<{ archive: string; sha256: string }> {
  const work = fs.mkdtempSync(path.join(outDir, '.repack-'));
  try {
    await run('tar', ['-xzf', built.archive, '-C', work]);
    const [folder] = fs.readdirSync(work);
    const manifestFile = path.join(work, folder!, 'svc-release.json');
    fs.writeFileSync(
      manifestFile,
      `${JSON.stringify({ ...(JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as object), builtAt, ...manifest }, null, 2)}\n`,
    );
    const archive = path.join(outDir, path.basename(built.archive));
    await run('tar', [
      '-C',
      work,
      '--owner=0',
      '--group=0',
      '--numeric-owner',
      '--sort=name',
      // The fastest gzip level: a repack only needs a valid .tar.gz, and level 6 cost 2 s more CPU each.
      '--use-compress-program=gzip -1',
      '-cf',
      archive,
      folder!,
    ]);
    const sha256 = await fileSha256(archive);
    fs.writeFileSync(`${archive}.sha256`, `${sha256}  ${path.basename(archive)}\n`);
    return { archive, sha256 };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

function run(program: string, args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let errors = '';
    child.stderr.on('data', (d: Buffer) => (errors += d.toString()));
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`${program} ${args.join(' ')} exited ${code}: ${errors.trim()}`)),
    );
  });
}
