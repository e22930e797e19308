/**
 * `svc doctor`'s check of hosted folders left on the host (ADR 0157): folders under
 * /var/lib/svc-hosted whose data folder was deleted or now names another one. They hold a PostgreSQL
 * cluster, releases and app data of a platform that is gone, and nothing else removes them.
 */
import { doctorCheck, type DoctorCheck } from '../../domain/doctor/index.js';
import { HOSTED_ROOT, orphanedHostedFolders } from '../../platform/files/hosted-folder.js';

/** How many folders a detail lists before "and N more". */
const SHOWN = 5;

/** The `data.hosted_leftovers` check over the hosted folders under `root`. */
export function hostedLeftoversCheck(root = HOSTED_ROOT): DoctorCheck {
  const orphans = orphanedHostedFolders(root);
  const listed =
    orphans.length <= SHOWN
      ? orphans.join(', ')
      : `${orphans.slice(0, SHOWN).join(', ')} and ${orphans.length - SHOWN} more`;
  return doctorCheck({
    id: 'data.hosted_leftovers',
    title: 'hosted folders of deleted data folders',
    required: false,
    status: orphans.length > 0 ? 'warn' : 'pass',
    detail:
      orphans.length === 0
        ? `none under ${root}`
        : `${orphans.length} under ${root} whose data folder is gone (each names it in its data-folder file): ${listed}`,
    fix: 'rm -rf each listed folder once no process uses it (fuser -vm <folder>), or restore its data folder from a backup',
  });
}
