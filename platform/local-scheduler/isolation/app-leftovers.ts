/**
 * What a deleted app leaves on the host (ADR 0191): its system user (`svc-app-<name>`, ADR 0047),
 * its data folder `<data>/app-data/<app>` (its `HOME` and volumes) and its releases
 * `<data>/releases/<app>`. The record of retired apps (`<data>/retired-apps.json`, the platform's
 * alone) keeps when each was first seen deleted, so the grace period outlives restarts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../../files/write-file-atomic.js';
import { appUserName, listAppUsers, removeSystemUser } from './app-identity.js';

/** App name to the time (ISO 8601) it was first seen deleted. */
export type RetiredApps = Record<string, string>;

/** The record of retired apps in the data folder. */
export function retiredAppsFile(dataDir: string): string {
  return path.join(dataDir, 'retired-apps.json');
}

/** The retired apps recorded in `dataDir` ({} when none or unreadable). */
export function readRetiredApps(dataDir: string): RetiredApps {
  try {
    const parsed = JSON.parse(fs.readFileSync(retiredAppsFile(dataDir), 'utf8')) as unknown;
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return {};
    const out: RetiredApps = {};
    for (const [app, at] of Object.entries(parsed)) if (typeof at === 'string') out[app] = at;
    return out;
  } catch {
    return {};
  }
}

/** Replaces the record of retired apps (owner-only). */
export function writeRetiredApps(dataDir: string, retired: RetiredApps): void {
  writeFileAtomic(retiredAppsFile(dataDir), `${JSON.stringify(retired, null, 2)}\n`, 0o600);
}

/** Apps that have a data folder (`<data>/app-data/<app>`). */
export function appDataFolders(dataDir: string): string[] {
  try {
    return fs
      .readdirSync(path.join(dataDir, 'app-data'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  } catch {
    return [];
  }
}

/** True when any volume folder of the app holds a file or folder (its data is kept with its user). */
export function volumesHoldData(dataDir: string, app: string): boolean {
  const volumes = path.join(dataDir, 'app-data', app, 'volumes');
  let names: string[];
  try {
    names = fs.readdirSync(volumes);
  } catch {
    return false;
  }
  return names.some((name) => {
    try {
      return fs.readdirSync(path.join(volumes, name)).length > 0;
    } catch {
      // A file where a volume folder would be: data all the same.
      return true;
    }
  });
}

/**
 * Removes (as root) the app's system user, then its data folder and its releases; returns whether a
 * user was removed. `userdel` refuses while a process still runs as the user: then nothing is
 * removed and the error says so.
 */
export async function removeAppLeftovers(dataDir: string, app: string): Promise<boolean> {
  const removed = process.getuid?.() === 0 ? await removeSystemUser(appUserName(app)) : false;
  await fs.promises.rm(path.join(dataDir, 'app-data', app), { recursive: true, force: true });
  await fs.promises.rm(path.join(dataDir, 'releases', app), { recursive: true, force: true });
  return removed;
}

/** An `svc-app-*` user on the host and what this platform knows of it. */
export interface AppUserLeftover {
  readonly user: string;
  readonly uid: number;
  /** The app of this platform whose data folder matches the user; undefined when none does. */
  readonly app?: string;
}

/** Every `svc-app-*` user of the host, each with the app of this data folder it belongs to, if any. */
export async function appUsersOf(dataDir: string): Promise<AppUserLeftover[]> {
  const byUser = new Map(appDataFolders(dataDir).map((app) => [appUserName(app), app]));
  return (await listAppUsers()).map((u) => {
    const app = byUser.get(u.name);
    return { user: u.name, uid: u.uid, ...(app !== undefined ? { app } : {}) };
  });
}
