/**
 * Applies the steps of `svc install` and `svc uninstall` (domain/host-install/install-plan.ts) to a
 * host, or to a tree under `root` (the host's paths prefixed, as `DESTDIR` does), each idempotently:
 * every step first looks at what is there and reports `unchanged` when nothing differs (ADR 0141).
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { RELEASE_EXECUTABLE, SERVICE_USER, type HostStep, type StepOwner } from '../../domain/host-install/index.js';
import { HostInstallError } from '../errors.js';
import { readPlatformRelease } from './platform-release-file.js';

/** What a step did (or, in a dry run, would do). */
export type StepOutcome = 'created' | 'updated' | 'unchanged' | 'deleted' | 'kept' | 'skipped';

export interface StepReport {
  readonly step: HostStep;
  readonly outcome: StepOutcome;
  /** One line for the operator: what and where. Never a file's content. */
  readonly detail: string;
}

/** Options of {@link applyHostSteps}. */
export interface ApplyHostStepsOptions {
  /** Prefix of every host path; `/` is the host itself. @default / */
  readonly root?: string;
  /** Report what would be done, change nothing. @default false */
  readonly dryRun?: boolean;
  /** Whether systemd manages this host (`/run/systemd/system` exists). @default detected, and false under a root other than / */
  readonly systemd?: boolean;
}

interface Context {
  readonly root: string;
  readonly dryRun: boolean;
  readonly systemd: boolean;
  readonly onHost: boolean;
}

/** Applies `steps` in order; stops at the first failure (a {@link HostInstallError} naming the step). */
export function applyHostSteps(steps: readonly HostStep[], options: ApplyHostStepsOptions = {}): StepReport[] {
  const root = path.resolve(options.root ?? '/');
  const onHost = root === '/';
  const context: Context = {
    root,
    dryRun: options.dryRun ?? false,
    onHost,
    systemd: options.systemd ?? (onHost && fs.existsSync('/run/systemd/system')),
  };
  const reports: StepReport[] = [];
  let changed = false;
  for (const step of steps) {
    let report: StepReport;
    try {
      report =
        step.kind === 'systemd' && step.command === 'daemon-reload' && !changed
          ? { step, outcome: 'unchanged', detail: 'systemctl daemon-reload (no unit file changed)' }
          : apply(step, context);
    } catch (error) {
      if (error instanceof HostInstallError) throw error;
      throw new HostInstallError(
        `${describe(step)}: ${(error as Error).message}`,
        { step: step.kind, path: 'path' in step ? step.path : undefined },
        error,
      );
    }
    // systemd reads unit files again only when one of them changed.
    if (
      (step.kind === 'file' || step.kind === 'remove') &&
      step.path.startsWith('/etc/systemd/') &&
      ['created', 'updated', 'deleted'].includes(report.outcome)
    )
      changed = true;
    reports.push(report);
  }
  return reports;
}

function describe(step: HostStep): string {
  switch (step.kind) {
    case 'user':
      return `system user ${step.name}`;
    case 'systemd':
      return `systemctl ${step.command === 'disable-now' ? `disable --now ${step.unit}` : 'daemon-reload'}`;
    case 'release':
      return `release ${step.release.version} at ${step.path}`;
    case 'file':
    case 'remove':
    case 'keep':
      return `${step.what} ${step.path}`;
    default:
      return `${step.kind} ${step.path}`;
  }
}

function apply(step: HostStep, context: Context): StepReport {
  const at = (hostPath: string) => path.join(context.root, hostPath);
  const done = (outcome: StepOutcome, detail = describe(step)): StepReport => ({ step, outcome, detail });
  switch (step.kind) {
    case 'user': {
      if (findUser(context.root, step.name)) return done('unchanged');
      if (!context.dryRun) {
        execFileSync(
          'useradd',
          [
            ...(context.onHost ? [] : ['--prefix', context.root]),
            '--system',
            '--user-group',
            '--home-dir',
            step.home,
            '--no-create-home',
            '--shell',
            '/usr/sbin/nologin',
            '--comment',
            'svc platform',
            step.name,
          ],
          { stdio: ['ignore', 'pipe', 'pipe'] },
        );
      }
      return done('created', `${describe(step)} (home ${step.home}, no login shell)`);
    }
    case 'directory': {
      const dir = at(step.path);
      const owner = ownerIds(context.root, step.owner);
      if (!fs.existsSync(dir)) {
        if (!context.dryRun) {
          // Parents with the usual 0755; only the folder itself gets the step's mode.
          fs.mkdirSync(path.dirname(dir), { recursive: true });
          fs.mkdirSync(dir, { mode: step.mode });
          fs.chmodSync(dir, step.mode);
          if (owner) fs.chownSync(dir, owner.uid, owner.gid);
        }
        return done(
          'created',
          `${describe(step)} (mode ${mode(step.mode)}, owner ${step.owner === 'root' ? 'root' : 'the service user'})`,
        );
      }
      const stat = fs.statSync(dir);
      if (!stat.isDirectory()) throw new HostInstallError(`${dir} exists and is not a folder`, { path: step.path });
      const wrongMode = (stat.mode & 0o777) !== step.mode;
      const wrongOwner = owner !== undefined && (stat.uid !== owner.uid || stat.gid !== owner.gid);
      if (!wrongMode && !wrongOwner) return done('unchanged');
      if (!context.dryRun) {
        if (wrongMode) fs.chmodSync(dir, step.mode);
        if (wrongOwner) fs.chownSync(dir, owner.uid, owner.gid);
      }
      return done(
        'updated',
        `${describe(step)} (${[wrongMode ? `mode ${mode(step.mode)}` : '', wrongOwner ? 'owner' : ''].filter(Boolean).join(', ')} corrected)`,
      );
    }
    case 'file': {
      const file = at(step.path);
      if (fs.existsSync(file)) {
        const stat = fs.statSync(file);
        const wrongMode = (stat.mode & 0o777) !== step.mode;
        const differs = !step.keep && fs.readFileSync(file, 'utf8') !== step.content;
        if (!differs && !wrongMode)
          return done('unchanged', step.keep ? `${describe(step)} (kept as it is: it is yours)` : describe(step));
        if (!context.dryRun) {
          if (differs) writeAtomically(file, step.content, step.mode);
          else fs.chmodSync(file, step.mode);
        }
        return done('updated', `${describe(step)} (${differs ? 'rewritten' : `mode ${mode(step.mode)} corrected`})`);
      }
      if (!context.dryRun) {
        fs.mkdirSync(path.dirname(file), { recursive: true });
        writeAtomically(file, step.content, step.mode);
      }
      return done('created', `${describe(step)} (mode ${mode(step.mode)})`);
    }
    case 'release':
      return applyRelease(step, at(step.path), context, done);
    case 'symlink': {
      const link = at(step.path);
      let current: string | undefined;
      try {
        current = fs.readlinkSync(link);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EINVAL')
          throw new HostInstallError(`${link} exists and is not a link`, { path: step.path });
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
      if (current === step.target) return done('unchanged', `link ${step.path} -> ${step.target}`);
      if (!context.dryRun) {
        fs.mkdirSync(path.dirname(link), { recursive: true });
        // A new link renamed over the old one: there is no moment without it.
        const temporary = `${link}.${randomBytes(4).toString('hex')}.tmp`;
        fs.symlinkSync(step.target, temporary);
        fs.renameSync(temporary, link);
      }
      return done(
        current === undefined ? 'created' : 'updated',
        `link ${step.path} -> ${step.target}${current === undefined ? '' : ` (was ${current})`}`,
      );
    }
    case 'remove': {
      const file = at(step.path);
      let stat: fs.Stats;
      try {
        stat = fs.lstatSync(file);
      } catch {
        return done('unchanged', `${describe(step)} (not there)`);
      }
      if (step.linkTarget !== undefined && (!stat.isSymbolicLink() || fs.readlinkSync(file) !== step.linkTarget)) {
        return done('kept', `${describe(step)} (not the link the install made: left alone)`);
      }
      if (!context.dryRun) fs.rmSync(file);
      return done('deleted');
    }
    case 'keep':
      return done('kept', `${describe(step)} (${fs.existsSync(at(step.path)) ? 'left in place' : 'not there'})`);
    case 'systemd': {
      if (!context.systemd)
        return done(
          'skipped',
          `${describe(step)} (${context.onHost ? 'systemd is not running on this host' : `not run under --root ${context.root}`})`,
        );
      if (step.command === 'disable-now') {
        const unitFile = `/etc/systemd/system/${step.unit}`;
        if (!fs.existsSync(unitFile)) return done('unchanged', `${describe(step)} (no unit)`);
        if (!context.dryRun)
          execFileSync('systemctl', ['disable', '--now', step.unit], { stdio: ['ignore', 'pipe', 'pipe'] });
        return done('updated', `${describe(step)} (the service is stopped; app processes it started keep running)`);
      }
      if (!context.dryRun) execFileSync('systemctl', ['daemon-reload'], { stdio: ['ignore', 'pipe', 'pipe'] });
      return done('updated');
    }
  }
}

function applyRelease(
  step: Extract<HostStep, { kind: 'release' }>,
  target: string,
  context: Context,
  done: (outcome: StepOutcome, detail?: string) => StepReport,
): StepReport {
  const from = path.resolve(step.from);
  const existed = fs.existsSync(target);
  if (existed) {
    if (fs.realpathSync(target) === fs.realpathSync(from))
      return done('unchanged', `${describe(step)} (running from it)`);
    let installed: ReturnType<typeof readPlatformRelease> | undefined;
    try {
      installed = readPlatformRelease(target);
    } catch {
      installed = undefined;
    }
    const same = installed && installed.builtAt === step.release.builtAt && installed.commit === step.release.commit;
    if (same && sameFile(path.join(from, RELEASE_EXECUTABLE), path.join(target, RELEASE_EXECUTABLE)))
      return done('unchanged');
  }
  if (!context.dryRun) {
    // Copied beside the target, then renamed into place: a release folder is complete or absent.
    const staging = `${target}.${randomBytes(4).toString('hex')}.tmp`;
    fs.cpSync(from, staging, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });
    if (existed) {
      const old = `${target}.${randomBytes(4).toString('hex')}.old`;
      fs.renameSync(target, old);
      fs.renameSync(staging, target);
      fs.rmSync(old, { recursive: true, force: true });
    } else {
      fs.renameSync(staging, target);
    }
  }
  return done(
    existed ? 'updated' : 'created',
    `${describe(step)} (from ${from}${existed ? ', replacing another build of this version' : ''})`,
  );
}

/** Same bytes (sizes first: a different build of the executable almost always differs in size). */
function sameFile(a: string, b: string): boolean {
  try {
    if (fs.statSync(a).size !== fs.statSync(b).size) return false;
    const digest = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');
    return digest(a) === digest(b);
  } catch {
    return false;
  }
}

function writeAtomically(file: string, content: string, fileMode: number): void {
  const temporary = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(temporary, content, { mode: fileMode });
  fs.chmodSync(temporary, fileMode);
  fs.renameSync(temporary, file);
}

function mode(value: number): string {
  return `0${value.toString(8)}`;
}

/** The user's ids from `<root>/etc/passwd` (system users are local: no NSS lookup). */
function findUser(root: string, name: string): { uid: number; gid: number } | undefined {
  let text: string;
  try {
    text = fs.readFileSync(path.join(root, 'etc/passwd'), 'utf8');
  } catch {
    return undefined;
  }
  for (const line of text.split('\n')) {
    const fields = line.split(':');
    if (fields[0] === name && fields.length >= 4) return { uid: Number(fields[2]), gid: Number(fields[3]) };
  }
  return undefined;
}

/** Ids to give a created folder: none when this process cannot give files away (not root). */
function ownerIds(root: string, owner: StepOwner): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  if (owner === 'root') return { uid: 0, gid: 0 };
  // The service user (created by the first step; absent in a dry run that would create it).
  return findUser(root, SERVICE_USER);
}
