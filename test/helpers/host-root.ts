/**
 * A host tree under a temporary folder for `svc install --root`: the account files `useradd --prefix`
 * edits, and systemd's own units so that `systemd-analyze verify --root` can load a unit there.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** Writes `<root>/etc/{passwd,group,shadow,gshadow}` holding root only, and copies systemd's units when present. */
export function prepareHostRoot(root: string): void {
  fs.mkdirSync(path.join(root, 'etc'), { recursive: true });
  fs.writeFileSync(path.join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/bash\n');
  fs.writeFileSync(path.join(root, 'etc/group'), 'root:x:0:\n');
  fs.writeFileSync(path.join(root, 'etc/shadow'), 'root:*:19000:0:99999:7:::\n', { mode: 0o640 });
  fs.writeFileSync(path.join(root, 'etc/gshadow'), 'root:*::\n', { mode: 0o640 });
  if (fs.existsSync('/usr/lib/systemd/system')) {
    fs.mkdirSync(path.join(root, 'usr/lib/systemd'), { recursive: true });
    fs.cpSync('/usr/lib/systemd/system', path.join(root, 'usr/lib/systemd/system'), {
      recursive: true,
      verbatimSymlinks: true,
    });
  }
}

/** Every file and folder under `root` (relative paths), to show that a dry run changed nothing. */
export function treeOf(root: string): string[] {
  return (fs.readdirSync(root, { recursive: true }) as string[]).sort();
}

/** Why `systemd-analyze verify` cannot run here, or undefined when it can. */
export function systemdAnalyzeMissing(): string | undefined {
  try {
    execFileSync('systemd-analyze', ['--version'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'systemd-analyze is not installed (Debian package systemd): the unit was not verified';
  }
}

/** Runs `systemd-analyze verify --root <root> <unit>`; returns its exit code and output. */
export function verifyUnit(root: string, unit: string): { code: number; output: string } {
  try {
    const output = execFileSync('systemd-analyze', ['verify', `--root=${root}`, unit], {
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
    });
    return { code: 0, output };
  } catch (error) {
    const e = error as { status: number; stdout: string; stderr: string };
    return { code: e.status, output: `${e.stdout}${e.stderr}` };
  }
}
