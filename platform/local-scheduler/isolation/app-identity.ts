/**
 * App identities: the unprivileged Unix user each app's processes run as when the platform runs as
 * root. By default a system user per app (`svc-app-<name>`, created on first use, no login shell,
 * no home); a task may name its own (`TaskSpec.user`: the spec's `schedulerVariables` uid/gid, or
 * the Dockerfile's `USER`), never root. Not root, there is nobody to switch to: apps run as the
 * platform's user and the driver says so (ADR 0047).
 */
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import os from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { UnavailableError } from '../../../domain/errors.js';
import { noLoginSystemAccount } from '../../system-account.js';

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
  /**
   * The identity of a task of `app` asking for `user` (Docker `USER` syntax); undefined in mode
   * `platform-user`. Answers from memory once {@link prepare} has run for the pair; otherwise it
   * falls back to synchronous look-ups (and `useradd`), which callers on the event loop avoid.
   */
  resolve(app: string, user: string | undefined): TaskIdentity | undefined;
  /**
   * Creates the app's user when missing and looks up `user`, without blocking the event loop
   * (child processes run asynchronously); afterwards {@link resolve} answers from memory.
   */
  prepare(app: string, user: string | undefined): Promise<void>;
  /** True when {@link resolve} answers `app` and `user` from memory. */
  prepared(app: string, user: string | undefined): boolean;
  /** Forgets the app's user (it was removed from the host); the next start creates it again. */
  forget(app: string): void;
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

const execFileAsync = promisify(execFile);

const created = new Set<string>();

/**
 * The system users this process created (with `useradd`), oldest first: what a test worker or a
 * benchmark removes when it ends (ADR 0191). A user found already present is not listed.
 */
export function appUsersCreatedHere(): readonly string[] {
  return [...created];
}

function parsePasswd(line: string): PasswdEntry | undefined {
  const fields = line.split(':');
  if (fields[0] === undefined || fields[2] === undefined || fields[3] === undefined) return undefined;
  return { name: fields[0], uid: Number(fields[2]), gid: Number(fields[3]) };
}

async function getentAsync(database: 'passwd' | 'group', key?: string): Promise<string[]> {
  try {
    const { stdout } = await execFileAsync('getent', key === undefined ? [database] : [database, key], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout.split('\n').filter((line) => line !== '');
  } catch {
    return [];
  }
}

async function lookupUserAsync(key: string): Promise<PasswdEntry | undefined> {
  const [line] = await getentAsync('passwd', key);
  return line === undefined ? undefined : parsePasswd(line);
}

async function lookupGroupAsync(key: string): Promise<number | undefined> {
  const [line] = await getentAsync('group', key);
  const gid = line?.split(':')[2];
  return gid === undefined ? undefined : Number(gid);
}

/**
 * Every app user the host knows (`svc-app-*`), from one `getent passwd`: one child process for all
 * apps instead of one per app.
 */
export async function listAppUsers(): Promise<PasswdEntry[]> {
  const out: PasswdEntry[] = [];
  for (const line of await getentAsync('passwd')) {
    if (!line.startsWith(PREFIX)) continue;
    const entry = parsePasswd(line);
    if (entry) out.push(entry);
  }
  return out;
}

/** `useradd` options of an app user (ADR 0047) but its ids: a system account with no home and no login. */
export const APP_USER_ACCOUNT_ARGS = noLoginSystemAccount('svc app');

const USERADD_ARGS = [...APP_USER_ACCOUNT_ARGS, '--user-group'];

/**
 * {@link ensureSystemUser} without blocking the event loop: `getent` and `useradd` run as
 * asynchronous child processes, and the retries wait on timers.
 */
export async function ensureSystemUserAsync(name: string): Promise<PasswdEntry> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 40; attempt += 1) {
    const found = await lookupUserAsync(name);
    if (found) return found;
    try {
      await execFileAsync('useradd', [...USERADD_ARGS, name]);
      created.add(name);
      continue;
    } catch (error) {
      lastError = error;
    }
    await delay(25 + Math.floor(Math.random() * 50));
  }
  throw new UnavailableError(
    `creating the system user ${name} for the app failed (useradd): ${String((lastError as { stderr?: string } | undefined)?.stderr ?? (lastError as Error | undefined)?.message ?? 'no such user after useradd').trim()}`,
    { code: 'app_user_unavailable', cause: lastError },
  );
}

/** Removes the system user `name` and its group (`userdel`); false when it did not exist. */
export async function removeSystemUser(name: string): Promise<boolean> {
  if (!(await lookupUserAsync(name))) return false;
  try {
    await execFileAsync('userdel', [name]);
    created.delete(name);
  } catch (error) {
    if (await lookupUserAsync(name))
      throw new UnavailableError(
        `removing the system user ${name} failed (userdel): ${String((error as { stderr?: string }).stderr ?? (error as Error).message).trim()}`,
        { code: 'app_user_unavailable', cause: error },
      );
  }
  return true;
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
      execFileSync('useradd', [...USERADD_ARGS, name], { stdio: ['ignore', 'ignore', 'pipe'] });
      created.add(name);
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

/**
 * Identities for a platform running as root: a system user per app, or the task's own non-root
 * user. Users and look-ups are kept in memory: {@link AppIdentities.prepare} fills it without
 * blocking (one `getent passwd` for every existing app user, `useradd` one at a time for new ones),
 * so the start of a task reads it and runs no child process (ADR 0190).
 */
export function appUserIdentities(): AppIdentities {
  const apps = new Map<string, PasswdEntry>();
  // Task users (`TaskSpec.user`) and groups by the key they were asked by; null: the host has none.
  const users = new Map<string, PasswdEntry | null>();
  const groups = new Map<string, number | null>();
  const pending = new Map<string, Promise<PasswdEntry>>();
  let known: Promise<Map<string, PasswdEntry>> | undefined;
  // useradd holds one lock on the user database: creations wait for each other here rather than retry on it.
  let creating: Promise<unknown> = Promise.resolve();

  const appUser = (app: string): PasswdEntry => {
    let entry = apps.get(app);
    if (!entry) {
      entry = ensureSystemUser(appUserName(app));
      apps.set(app, entry);
    }
    return entry;
  };
  const appUserAsync = (app: string): Promise<PasswdEntry> => {
    const cached = apps.get(app);
    if (cached) return Promise.resolve(cached);
    let promise = pending.get(app);
    if (!promise) {
      const name = appUserName(app);
      known ??= listAppUsers().then((list) => new Map(list.map((u) => [u.name, u])));
      promise = known
        .then((all) => {
          const found = all.get(name);
          if (found) return found;
          const made = creating.then(() => ensureSystemUserAsync(name));
          creating = made.catch(() => undefined);
          return made;
        })
        .then(
          (entry) => {
            apps.set(app, entry);
            pending.delete(app);
            return entry;
          },
          (error: unknown) => {
            pending.delete(app);
            throw error;
          },
        );
      pending.set(app, promise);
    }
    return promise;
  };
  const userOf = (key: string): PasswdEntry | undefined => {
    if (!users.has(key)) users.set(key, lookupUser(key) ?? null);
    return users.get(key) ?? undefined;
  };
  const groupOf = (key: string): number | undefined => {
    if (!groups.has(key)) groups.set(key, lookupGroup(key) ?? null);
    return groups.get(key) ?? undefined;
  };
  const wantedOf = (user: string | undefined) =>
    user === undefined || user.trim() === '' ? undefined : parseUser(user);

  return {
    mode: 'app-users',
    prepared(app, user) {
      if (!apps.has(app)) return false;
      const wanted = wantedOf(user);
      if (!wanted) return true;
      return (
        users.has(wanted.user) && (wanted.group === undefined || /^\d+$/.test(wanted.group) || groups.has(wanted.group))
      );
    },
    async prepare(app, user) {
      await appUserAsync(app);
      const wanted = wantedOf(user);
      if (!wanted) return;
      // A user or group the host did not have may have been added since: asked again.
      if (!users.get(wanted.user)) users.set(wanted.user, (await lookupUserAsync(wanted.user)) ?? null);
      if (wanted.group !== undefined && !/^\d+$/.test(wanted.group) && groups.get(wanted.group) == null)
        groups.set(wanted.group, (await lookupGroupAsync(wanted.group)) ?? null);
    },
    forget(app) {
      const entry = apps.get(app);
      apps.delete(app);
      if (entry) {
        users.delete(entry.name);
        users.delete(String(entry.uid));
      }
      known = undefined;
    },
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
      const wanted = wantedOf(user);
      if (wanted === undefined || user === undefined) return fallback();
      const looked = userOf(wanted.user);
      const entry = /^\d+$/.test(wanted.user)
        ? { name: looked?.name, uid: Number(wanted.user), gid: looked?.gid }
        : looked;
      if (!entry) return fallback(`USER ${user}: no such user on this host; running as ${own.name}`);
      let gid = entry.gid ?? own.gid;
      if (wanted.group !== undefined) {
        const group = /^\d+$/.test(wanted.group) ? Number(wanted.group) : groupOf(wanted.group);
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
  return {
    mode: 'platform-user',
    reason,
    resolve: () => undefined,
    prepare: () => Promise.resolve(),
    prepared: () => true,
    forget: () => undefined,
  };
}

/** Per-app users when this process is root, else the platform's user (with the reason). */
export function detectAppIdentities(): AppIdentities {
  if (process.getuid?.() === 0) return appUserIdentities();
  return platformUserIdentities(
    `the platform runs as ${os.userInfo().username} (uid ${String(process.getuid?.())}), not root: every app runs as that user and can read the platform's data folder and every other app's files`,
  );
}
