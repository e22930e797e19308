/**
 * The per-app system users (`svc-app-*`, ADR 0047) as records a backup keeps, and their re-creation
 * on a new host with the same ids when those are free (so restored files keep their owners).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import type { BackupAppUser } from '../../domain/backup/index.js';
import { APP_USER_ACCOUNT_ARGS } from '../local-scheduler/isolation/app-identity.js';

const PREFIX = 'svc-app-';

/** The app users of this host, from the passwd database. */
export function listAppUsers(passwdFile = '/etc/passwd'): BackupAppUser[] {
  let text = '';
  try {
    text = fs.readFileSync(passwdFile, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .map((line) => line.split(':'))
    .filter((f) => f[0]?.startsWith(PREFIX) === true && f.length >= 4)
    .map((f) => ({ name: f[0]!, uid: Number(f[2]), gid: Number(f[3]) }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** What {@link recreateAppUsers} did per user. */
export interface RecreatedUser {
  readonly name: string;
  readonly result: 'exists' | 'created' | 'created-with-new-id' | 'skipped-not-root';
}

/**
 * Creates each recorded user that is missing, as a system user with its recorded uid and gid when
 * both are free (otherwise with new ones: the next deploy gives its files to the new id).
 */
export function recreateAppUsers(users: readonly BackupAppUser[]): RecreatedUser[] {
  const existing = new Map(listAppUsers().map((u) => [u.name, u]));
  const uids = new Set(readIds('/etc/passwd'));
  const gids = new Set(readIds('/etc/group'));
  const root = process.getuid?.() === 0;
  return users.map((user): RecreatedUser => {
    if (!/^svc-app-[a-z0-9_-]+$/.test(user.name)) throw new Error(`${user.name} is not an app user name`);
    if (existing.has(user.name)) return { name: user.name, result: 'exists' };
    if (!root) return { name: user.name, result: 'skipped-not-root' };
    return { name: user.name, result: createAppUser(user, !uids.has(user.uid) && !gids.has(user.gid)) };
  });
}

/**
 * Creates one app user: with its recorded ids when they looked free, falling back to new ones when
 * another process took either id since (system ids are handed out from the top of the range, so an
 * id freed on this host is soon taken again); with new ones otherwise.
 */
export function createAppUser(user: BackupAppUser, idsLookFree: boolean): 'created' | 'created-with-new-id' {
  if (idsLookFree) {
    let groupMade = false;
    try {
      run('groupadd', ['--system', '--gid', String(user.gid), user.name]);
      groupMade = true;
      run('useradd', [...APP_USER_ACCOUNT_ARGS, '--uid', String(user.uid), '--gid', String(user.gid), user.name]);
      return 'created';
    } catch {
      // The id went to someone else: the group made for it (if any) goes, and new ids are taken.
      if (groupMade) run('groupdel', [user.name]);
    }
  }
  run('useradd', [...APP_USER_ACCOUNT_ARGS, '--user-group', user.name]);
  return 'created-with-new-id';
}

function run(command: string, args: readonly string[]): void {
  execFileSync(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

function readIds(file: string): number[] {
  try {
    return fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .map((l) => Number(l.split(':')[2]))
      .filter((n) => Number.isInteger(n));
  } catch {
    return [];
  }
}
