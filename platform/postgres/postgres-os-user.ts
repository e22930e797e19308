/**
 * The system user the managed PostgreSQL server runs as. PostgreSQL refuses to run as root, so a
 * platform running as root runs it as `postgres` (the Debian package's user) when that user exists,
 * else as a system user it creates once (`svc-postgres`); a platform running as anyone else runs it
 * as itself.
 */
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { UnavailableError } from '../../domain/errors.js';
import { noLoginSystemAccount } from '../system-account.js';

/** A system user: name and numeric ids. */
export interface OsUser {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
}

/** Users tried, in order, when the platform runs as root. */
export const POSTGRES_USER_CANDIDATES = ['postgres', 'svc-postgres'] as const;

/** Looks a user up in the system's user database (`getent passwd`); undefined when absent. */
export function lookupOsUser(name: string): OsUser | undefined {
  try {
    const line = execFileSync('getent', ['passwd', name], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    const [, , uid, gid] = line.split(':');
    if (uid === undefined || gid === undefined) return undefined;
    return { name, uid: Number(uid), gid: Number(gid) };
  } catch {
    return undefined;
  }
}

/** True when this process runs as root. */
export function runningAsRoot(): boolean {
  return process.getuid?.() === 0;
}

/** The user the server runs as, without creating one; undefined when root has no candidate user yet. */
export function findPostgresOsUser(): OsUser | undefined {
  if (!runningAsRoot()) {
    const me = os.userInfo();
    return { name: me.username, uid: me.uid, gid: me.gid };
  }
  for (const name of POSTGRES_USER_CANDIDATES) {
    const user = lookupOsUser(name);
    if (user) return user;
  }
  return undefined;
}

/** The user the server runs as, creating the `svc-postgres` system user when root has none. */
export function ensurePostgresOsUser(): OsUser {
  const found = findPostgresOsUser();
  if (found) return found;
  const name = POSTGRES_USER_CANDIDATES[1];
  try {
    execFileSync('useradd', [...noLoginSystemAccount('svc managed PostgreSQL'), '--user-group', name], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
  } catch (error) {
    throw new UnavailableError(
      `PostgreSQL cannot run as root and creating the system user ${name} failed (useradd): create it by hand or install the Debian package postgresql, which creates the user postgres`,
      { code: 'postgres_user_missing', cause: error },
    );
  }
  const created = lookupOsUser(name);
  if (!created)
    throw new UnavailableError(`the system user ${name} was created but cannot be looked up`, {
      code: 'postgres_user_missing',
    });
  return created;
}

/** spawn options running a program as `user` (only when the platform is root). */
export function asUser(user: OsUser): { uid?: number; gid?: number } {
  return runningAsRoot() ? { uid: user.uid, gid: user.gid } : {};
}
