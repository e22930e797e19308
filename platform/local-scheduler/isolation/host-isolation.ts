/**
 * How the local driver isolates apps on this host: who tasks run as (each app's own user when
 * root), whether each task gets a private mount namespace, and the driver's folders closed to app
 * users.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { firstBlockedFolder } from '../../postgres/managed-postgres-layout.js';
import { detectAppIdentities, type AppIdentities } from './app-identity.js';
import { detectPrivateMounts, type PrivateMounts } from '../tasks/task-sandbox.js';
import type { LocalSchedulerOptions } from '../local-scheduler-options.js';

/** Any other user: what an app user can pass through, at least. */
const NOBODY = { name: 'nobody', uid: 65534, gid: 65534 };

/** Who tasks run as, and whether they get private mounts. */
export interface HostIsolation {
  readonly identities: AppIdentities;
  readonly privateMounts: PrivateMounts;
}

/**
 * Detects (unless given) the app identities and private mounts, logs what apps are not isolated
 * by, and with app users closes the driver's folders to them and names a folder above that they
 * cannot enter.
 */
export function prepareHostIsolation(
  options: Pick<LocalSchedulerOptions, 'dataDir' | 'identities' | 'privateMounts'>,
  logger: Logger,
): HostIsolation {
  const identities = options.identities ?? detectAppIdentities();
  if (identities.mode === 'platform-user')
    logger.warn(
      { reason: identities.reason },
      "apps share the platform's user: not running as root, so apps are not isolated from each other or from the platform",
    );
  const privateMounts =
    options.privateMounts ??
    (identities.mode === 'app-users'
      ? detectPrivateMounts()
      : { available: false, reason: "apps run as the platform's user" });
  if (!privateMounts.available) logger.info({ reason: privateMounts.reason }, 'no private mount namespace per task');
  if (identities.mode === 'app-users') {
    secureDriverFolders(options.dataDir);
    // An app user must pass through every folder above its release (a checkout under /root, say).
    const blocked = firstBlockedFolder(options.dataDir, NOBODY);
    if (blocked !== undefined)
      logger.error(
        { blocked, dataDir: options.dataDir },
        `app users cannot enter ${blocked}, so app processes cannot reach their releases: chmod o+x ${blocked} (enter, not list), or set SVC_DATA_DIR to a folder under one they can enter`,
      );
  }
  return { identities, privateMounts };
}

/**
 * Closes the driver's folders to app users: the data folder can be entered (apps reach their
 * allocation, data and release folders below it) but not listed, and the state file, which holds
 * every task's environment, is the platform's alone.
 */
function secureDriverFolders(dataDir: string): void {
  fs.mkdirSync(dataDir, { recursive: true });
  fs.chmodSync(dataDir, 0o711);
  for (const [name, mode] of [
    ['scheduler', 0o700],
    ['allocs', 0o711],
    ['app-data', 0o711],
  ] as const) {
    const dir = path.join(dataDir, name);
    fs.mkdirSync(dir, { recursive: true, mode });
    fs.chmodSync(dir, mode);
  }
}
