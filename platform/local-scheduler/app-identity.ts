/**
 * App identities: the unprivileged Unix user each app's processes run as when the platform runs as
 * root. By default a system user per app (`svc-app-<name>`, created on first use, no login shell,
 * no home); a task may name its own (`TaskSpec.user`: the spec's `schedulerVariables` uid/gid, or
 * the Dockerfile's `USER`), never root. Not root, there is nobody to switch to: apps run as the
 * platform's user and the driver says so (ADR 0047).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import os from 'node:os';
import { UnavailableError } from '../../domain/errors.js';

/** The user and groups one task runs as. */
export interface TaskIdentity {
  readonly uid: number;
  readonly gid: number;
  /** Supplementary groups (the app's group when `gid` is another, so the release stays readable); otherwise none. */
  readonly groups: readonly number[];
  /** User name, when the user database has one. */
  readonly name?: string;
  /** The app's own user and group: owner of its data and volume folders, group of its release and allocation folders. */
  readonly app: { readonly uid: number; readonly gid: number; readonly name: string };
  /** Where the identity came from, for the task's start event. */
  readonly source: 'app-user' | 'task-user';
  /** Why a requested user was not applied, if one was refused. */
  readonly note?: string;
}

/** How the driver assigns identities on this host. */
export interface AppIdentities {
  /** `app-users` as root; `platform-user` otherwise (apps share the platform's user). */
  readonly mode: 'app-users' | 'platform-user';
  /** Why apps share the platform's user (mode `platform-user`). */
  readonly reason?: string;
  /** The identity of a task of `app` asking for `user` (Docker `USER` syntax); undefined in mode `platform-user`. */
  resolve(app: string, user: string | undefined): TaskIdentity | undefined;
}

/** Longest user name `useradd` accepts. */
export const MAX_USER_NAME = 32;
const PREFIX = 'svc-app-';

/**
 * The system user of an app: `svc-app-<name>`, lower-cased with anything but letters, digits, `_`
 * and `-` replaced; a name that had to change or is longer than 32 characters is cut and suffixed
 * with 8 hex digits of its SHA-256, so two apps never share a user.
 */
export function appUserName(app: string): string {
  const cleaned = app.toLowerCase().replace(/[^a-z0-9_-]/g, '-');
  const full = `${PREFIX}${cleaned}`;
  if (cleaned === app && full.length <= MAX_USER_NAME) return full;
  const hash = createHash('sha256').update(app).digest('hex').slice(0, 8);
  return `${PREFIX}${cleaned.slice(0, MAX_USER_NAME - PREFIX.length - 9)}-${hash}`;
}

interface PasswdEntry {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
}

function getent(database: 'passwd' | 'group', key: string): string[] | undefined {
  try {
    const line = execFileSync('getent', [database, key], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      .trim()
      .split('\n')[0];
    return line ? line.split(':') : undefined;
  } catch {
    return undefined;
  }
}

function lookupUser(key: string): PasswdEntry | undefined {
  const fields = getent('passwd', key);
  if (!fields || fields[2] === undefined || fields[3] === undefined) return undefined;
  return { name: fields[0]!, uid: Number(fields[2]), gid: Number(fields[3]) };
}

function lookupGroup(key: string): number | undefined {
  const fields = getent('group', key);
  return fields?.[2] === undefined ? undefined : Number(fields[2]);
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * The system user `name`, created when missing (`useradd --system`). Two drivers (or test workers)
 * may create it at once: `useradd` then fails on its lock or on the existing name, and the lookup
 * that follows finds the user the other one created.
 */
export function ensureSystemUser(name: string): PasswdEntry {
  for (let attempt = 0; attempt < 40; attempt += 1) {
    const found = lookupUser(name);
    if (found) return found;
    try {
      execFileSync(
        'useradd',
        [
          '--system',
          '--user-group',
          '--no-create-home',
          '--home-dir',
          '/nonexistent',
          '--shell',
          '/usr/sbin/nologin',
          '--comment',
          'svc app',
          name,
        ],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
    } catch (error) {
      if (attempt === 39)
        throw new UnavailableError(
          `creating the system user ${name} for the app failed (useradd): ${String((error as { stderr?: Buffer }).stderr ?? (error as Error).message).trim()}`,
          { code: 'app_user_unavailable', cause: error },
        );
      sleepSync(25 + Math.floor(Math.random() * 50));
    }
  }
  throw new UnavailableError(`the system user ${name} cannot be looked up after useradd`, {
    code: 'app_user_unavailable',
  });
}

/** Parses Docker `USER` syntax (`name`, `uid`, `name:group`, `uid:gid`). */
function parseUser(user: string): { user: string; group?: string } {
  const [name = '', group] = user.trim().split(':');
  return group === undefined || group === '' ? { user: name } : { user: name, group };
}

/** Identities for a platform running as root: a system user per app, or the task's own non-root user. */
export function appUserIdentities(): AppIdentities {
  const apps = new Map<string, PasswdEntry>();
  const appUser = (app: string): PasswdEntry => {
    let entry = apps.get(app);
    if (!entry) {
      entry = ensureSystemUser(appUserName(app));
      apps.set(app, entry);
    }
    return entry;
  };
  return {
    mode: 'app-users',
    resolve(app, user) {
      const own = appUser(app);
      const base = { app: { uid: own.uid, gid: own.gid, name: own.name } };
      const fallback = (note?: string): TaskIdentity => ({
        uid: own.uid,
        gid: own.gid,
        groups: [],
        name: own.name,
        ...base,
        source: 'app-user',
        ...(note ? { note } : {}),
      });
      if (user === undefined || user.trim() === '') return fallback();
      const wanted = parseUser(user);
      const entry = /^\d+$/.test(wanted.user)
        ? { name: lookupUser(wanted.user)?.name, uid: Number(wanted.user), gid: lookupUser(wanted.user)?.gid }
        : lookupUser(wanted.user);
      if (!entry) return fallback(`USER ${user}: no such user on this host; running as ${own.name}`);
      let gid = entry.gid ?? own.gid;
      if (wanted.group !== undefined) {
        const group = /^\d+$/.test(wanted.group) ? Number(wanted.group) : lookupGroup(wanted.group);
        if (group === undefined) return fallback(`USER ${user}: no such group on this host; running as ${own.name}`);
        gid = group;
      }
      if (entry.uid === 0) return fallback(`USER ${user} is root, which apps never run as; running as ${own.name}`);
      if (gid === 0) gid = own.gid;
      return {
        uid: entry.uid,
        gid,
        groups: gid === own.gid ? [] : [own.gid],
        ...(entry.name ? { name: entry.name } : {}),
        ...base,
        source: 'task-user',
      };
    },
  };
}

/** Identities for a platform that is not root: tasks run as the platform's own user. */
export function platformUserIdentities(reason: string): AppIdentities {
  return { mode: 'platform-user', reason, resolve: () => undefined };
}

/** Per-app users when this process is root, else the platform's user (with the reason). */
export function detectAppIdentities(): AppIdentities {
  if (process.getuid?.() === 0) return appUserIdentities();
  return platformUserIdentities(
    `the platform runs as ${os.userInfo().username} (uid ${String(process.getuid?.())}), not root: every app runs as that user and can read the platform's data folder and every other app's files`,
  );
}
