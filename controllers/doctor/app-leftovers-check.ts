/**
 * `svc doctor`'s check of app users left on the host (ADR 0191): `svc-app-*` users of deleted apps
 * waiting for their grace period or kept for their volumes' data, and users this platform has no
 * app folder for (another install's, or left behind by tests and benchmarks).
 */
import { doctorCheck, type DoctorCheck } from '../../domain/doctor/index.js';
import type { SvcConfig } from '../../platform/config.js';
import { readHostedFolder } from '../../platform/files/hosted-folder.js';
import { runningAsRoot } from '../../platform/postgres/postgres-os-user.js';
import {
  appUsersOf,
  readRetiredApps,
  volumesHoldData,
} from '../../platform/local-scheduler/isolation/app-leftovers.js';

/** How many names a detail lists before "and N more". */
const SHOWN = 10;

function names(list: readonly string[]): string {
  return list.length <= SHOWN ? list.join(', ') : `${list.slice(0, SHOWN).join(', ')} and ${list.length - SHOWN} more`;
}

/** The `apps.leftovers` check; none when apps do not run as their own users. */
export async function appLeftoversCheck(config: SvcConfig): Promise<DoctorCheck[]> {
  if (config.schedulerDriver !== 'local' || !runningAsRoot()) return [];
  const dataDir = readHostedFolder(config.dataDir) ?? config.dataDir;
  const users = await appUsersOf(dataDir);
  const retired = readRetiredApps(dataDir);
  const unknown = users.filter((u) => u.app === undefined).map((u) => u.user);
  const deleted = users.filter((u) => u.app !== undefined && retired[u.app] !== undefined);
  const kept = deleted.filter((u) => volumesHoldData(dataDir, u.app!)).map((u) => u.user);
  const waiting = deleted.filter((u) => !kept.includes(u.user)).map((u) => u.user);
  const grace = config.appRemovalGraceMs;
  const parts = [`${users.length - unknown.length - deleted.length} app user(s) of live apps`];
  if (waiting.length > 0)
    parts.push(
      grace === 0
        ? `deleted apps kept (SVC_APP_REMOVAL_GRACE is off): ${names(waiting)}`
        : `deleted apps removed after their grace period (SVC_APP_REMOVAL_GRACE): ${names(waiting)}`,
    );
  if (kept.length > 0) parts.push(`deleted apps kept because their volumes hold data: ${names(kept)}`);
  if (unknown.length > 0)
    parts.push(`orphaned (no app folder in ${dataDir}; another install's, or left by tests): ${names(unknown)}`);
  return [
    doctorCheck({
      id: 'apps.leftovers',
      title: 'app users of deleted apps',
      required: false,
      status: unknown.length > 0 || kept.length > 0 ? 'warn' : 'pass',
      detail: parts.join('; '),
      fix: [
        ...(unknown.length > 0 ? ['userdel <name> for each orphaned user no process runs as (ps -u <name>)'] : []),
        ...(kept.length > 0
          ? [
              `remove <data>/app-data/<app>/volumes of a kept app when its data is no longer wanted: the next sweep removes its user`,
            ]
          : []),
      ].join('; '),
    }),
  ];
}
