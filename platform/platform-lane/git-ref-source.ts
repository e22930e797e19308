/**
 * A release source that builds a git ref of the platform's own repository: the tree at the
 * resolved commit is exported (`git archive`), `node_modules` links to the repository's, and
 * `tsc -p tsconfig.build.json` builds `dist/` in isolation from the running release.
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ReleaseSource, StagedRelease } from '../../domain/platform/index.js';
import { defaultReleaseLabel } from './built-checkout-source.js';

const run = promisify(execFile);

/** `git:<ref>` of the repository at `repo`. */
export class GitRefSource implements ReleaseSource {
  readonly description: string;

  constructor(
    private readonly repo: string,
    private readonly ref: string,
  ) {
    this.description = `git:${ref} (${repo})`;
  }

  async stage(into: string, signal: AbortSignal): Promise<StagedRelease> {
    const { stdout } = await run('git', ['rev-parse', '--verify', `${this.ref}^{commit}`], { cwd: this.repo, signal });
    const commit = stdout.trim();
    await new Promise<void>((resolve, reject) => {
      const archive = spawn('git', ['archive', '--format=tar', commit], {
        cwd: this.repo,
        stdio: ['ignore', 'pipe', 'pipe'],
        signal,
      });
      const tar = spawn('tar', ['-x', '-C', into], { stdio: ['pipe', 'ignore', 'pipe'], signal });
      archive.stdout.pipe(tar.stdin);
      let errors = '';
      archive.stderr.on('data', (d: Buffer) => (errors += d.toString()));
      tar.stderr.on('data', (d: Buffer) => (errors += d.toString()));
      archive.on('error', reject);
      tar.on('error', reject);
      tar.on('close', (code) =>
        code === 0 ? resolve() : reject(new Error(`exporting ${commit} failed: ${errors.trim().slice(0, 2000)}`)),
      );
    });
    fs.symlinkSync(fs.realpathSync(path.join(this.repo, 'node_modules')), path.join(into, 'node_modules'));
    const tsc = path.join(into, 'node_modules', 'typescript', 'bin', 'tsc');
    try {
      await run(process.execPath, [tsc, '-p', 'tsconfig.build.json'], {
        cwd: into,
        signal,
        maxBuffer: 16 * 1024 * 1024,
      });
    } catch (error) {
      const out = (error as { stdout?: string }).stdout ?? '';
      throw new Error(`building ${commit} failed: ${out.trim().slice(-2000) || (error as Error).message}`, {
        cause: error,
      });
    }
    if (!fs.existsSync(path.join(into, 'dist', 'cli', 'main.js')))
      throw new Error(`building ${commit} produced no dist/cli/main.js`);
    const pkg = JSON.parse(fs.readFileSync(path.join(into, 'package.json'), 'utf8')) as { version?: string };
    const version = typeof pkg.version === 'string' ? pkg.version : '0.0.0';
    return { version, commit, label: defaultReleaseLabel(version, commit, this.repo) };
  }
}
