/**
 * App users of a benchmark (ADR 0047, 0190): created before the timed part, timed on their own
 * (first-time creation is not part of "start to all running", which assumes them, as on a running
 * host), and removed at the end when the benchmark created them.
 */
import {
  appUserIdentities,
  appUserName,
  appUsersCreatedHere,
  listAppUsers,
  removeSystemUser,
} from '../../platform/local-scheduler/isolation/app-identity.js';

/** What {@link prepareAppUsers} did: how long it took and which users it created. */
export interface BenchAppUsers {
  readonly created: readonly string[];
  readonly seconds: number;
  /** Removes the users this benchmark created (no-op when not root); answers those still there after. */
  remove(): Promise<string[]>;
}

/** Creates the app users of `apps` that are missing, the way the driver does (one `useradd` at a time). */
export async function prepareAppUsers(apps: readonly string[]): Promise<BenchAppUsers> {
  if (process.getuid?.() !== 0) return { created: [], seconds: 0, remove: () => Promise.resolve([]) };
  const existing = new Set((await listAppUsers()).map((u) => u.name));
  const created = apps.map(appUserName).filter((name) => !existing.has(name));
  const identities = appUserIdentities();
  const started = performance.now();
  await Promise.all(apps.map((app) => identities.prepare(app, undefined)));
  const seconds = (performance.now() - started) / 1000;
  return {
    created,
    seconds,
    async remove() {
      for (const name of created) await removeSystemUser(name).catch(() => undefined);
      const left = new Set((await listAppUsers()).map((u) => u.name));
      return created.filter((name) => left.has(name));
    },
  };
}

/** Removes the app users this process created (the control plane runs in the benchmark's process). */
export async function removeAppUsersCreatedHere(): Promise<void> {
  for (const name of appUsersCreatedHere()) await removeSystemUser(name).catch(() => undefined);
}
