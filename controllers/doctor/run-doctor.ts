/**
 * `svc doctor`: checks what the platform needs on this host, each with a fix (ADR 0013). Required:
 * Node, git, the PostgreSQL server programs (when managed), a reachable managed cluster folder, free
 * ports, a writable data folder with free disk. Optional: promtool, cgroup controllers, the clock.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_TASK_LIMITS, detectPrivateMounts } from '../../platform/local-scheduler/index.js';
import { appLeftoversCheck } from './app-leftovers-check.js';
import { containerChecks } from './container-checks.js';
import { hostedLeftoversCheck } from './hosted-leftovers-check.js';
import {
  doctorCheck,
  doctorReport,
  versionAtLeast,
  type DoctorCheck,
  type DoctorReport,
} from '../../domain/doctor/index.js';
import type { SvcConfig } from '../../platform/config.js';
import {
  answers,
  cgroupController,
  freeDiskBytes,
  nearestExisting,
  ntpSynchronized,
  probePort,
  programVersion,
  writable,
} from '../../platform/host/host-probes.js';
import {
  installedPostgresVersions,
  POSTGRES_INSTALL_COMMAND,
  postgresServerBinDir,
} from '../../platform/postgres/postgres-binaries.js';
import {
  findPostgresOsUser,
  runningAsRoot,
  POSTGRES_USER_CANDIDATES,
} from '../../platform/postgres/postgres-os-user.js';
import { managedPostgresLayout } from '../../platform/postgres/managed-postgres.js';
import { firstBlockedFolder } from '../../platform/postgres/managed-postgres-layout.js';
import { processAlive, readPostmasterPid } from '../../platform/postgres/postmaster-pid.js';
import { knowledgeSampleWriteCheck } from './knowledge-check.js';
import { HOSTED_MARKER, HOSTED_ROOT, HOSTED_SUBFOLDERS, readHostedFolder } from '../../platform/files/hosted-folder.js';

/** The Node version the package declares (`engines.node`). */
export const MINIMUM_NODE = '20.18';

export interface DoctorOptions {
  readonly config: SvcConfig;
  /** Node version to judge. @default process.versions.node */
  readonly nodeVersion?: string;
  /** cgroup mount. @default /sys/fs/cgroup */
  readonly cgroupRoot?: string;
}

/** Runs every check; never throws for a missing piece (that is a failed check). */
export async function runDoctor(options: DoctorOptions): Promise<DoctorReport> {
  const { config } = options;
  const checks: DoctorCheck[] = [];
  const node = options.nodeVersion ?? process.versions.node;
  checks.push(
    doctorCheck({
      id: 'node',
      title: 'Node.js',
      required: true,
      status: versionAtLeast(node, MINIMUM_NODE) ? 'pass' : 'fail',
      detail: `v${node} (needs >= ${MINIMUM_NODE})`,
      fix: `install Node.js ${MINIMUM_NODE} or newer (e.g. from nodejs.org or NodeSource's Debian packages)`,
    }),
  );
  const git = await programVersion('git');
  checks.push(
    doctorCheck({
      id: 'git',
      title: 'git (apps repository, deploy clones)',
      required: true,
      status: git ? 'pass' : 'fail',
      detail: git ?? 'git is not on the PATH',
      fix: 'apt-get install git',
    }),
  );
  checks.push(...(await postgresChecks(config)));
  const promtool = await programVersion('promtool');
  checks.push(
    doctorCheck({
      id: 'promtool',
      title: 'promtool (checks the generated Prometheus configuration in `npm test`)',
      required: false,
      status: promtool ? 'pass' : 'fail',
      detail: promtool ?? 'promtool is not on the PATH',
      fix: 'apt-get install prometheus (scripts/ensure-deps.sh installs it without starting a server)',
    }),
  );
  checks.push(...cgroupChecks(options.cgroupRoot));
  checks.push(...(await containerChecks(config)));
  checks.push(...(await portChecks(config)));
  checks.push(await knowledgeSampleWriteCheck(config));
  checks.push(...dataFolderChecks(config));
  checks.push(...appIsolationChecks(config));
  checks.push(...(await appLeftoversCheck(config)));
  // Only root makes hosted folders (others run apps and PostgreSQL as themselves).
  if (runningAsRoot()) checks.push(hostedLeftoversCheck());
  checks.push(await clockCheck());
  return doctorReport(checks);
}

async function postgresChecks(config: SvcConfig): Promise<DoctorCheck[]> {
  if (!config.postgresManaged) {
    const tools = ['pg_dump', 'pg_restore', 'psql'];
    const dir =
      config.postgresBinDir ??
      (installedPostgresVersions()[0] ? `/usr/lib/postgresql/${installedPostgresVersions()[0]}/bin` : undefined);
    const missing = tools.filter((tool) => !(dir ? fs.existsSync(`${dir}/${tool}`) : false));
    return [
      doctorCheck({
        id: 'postgres.binaries',
        title: 'PostgreSQL client programs (snapshots, migrations)',
        required: false,
        status: missing.length === 0 ? 'pass' : 'fail',
        detail: missing.length === 0 ? `${dir}` : `missing ${missing.join(', ')}${dir ? ` in ${dir}` : ''}`,
        fix: 'apt-get install postgresql-client (or set SVC_POSTGRES_BIN_DIR)',
      }),
      doctorCheck({
        id: 'postgres.server',
        title: 'PostgreSQL server of app databases',
        required: false,
        status: 'skip',
        detail: `external server ${config.postgresHost}:${config.postgresPort} (SVC_POSTGRES_HOST${config.postgresHost === '127.0.0.1' ? ' unset, SVC_POSTGRES_MANAGED=false' : ''}); not checked`,
      }),
    ];
  }
  const checks: DoctorCheck[] = [];
  let binDir: string | undefined;
  try {
    binDir = postgresServerBinDir(config.postgresBinDir === undefined ? {} : { binDir: config.postgresBinDir });
    checks.push(
      doctorCheck({
        id: 'postgres.binaries',
        title: 'PostgreSQL server programs (the managed server)',
        required: true,
        status: 'pass',
        detail: binDir,
      }),
    );
  } catch (error) {
    checks.push(
      doctorCheck({
        id: 'postgres.binaries',
        title: 'PostgreSQL server programs (the managed server)',
        required: true,
        status: 'fail',
        detail: (error as Error).message,
        fix: `${POSTGRES_INSTALL_COMMAND} (as root; npm start does it), or set SVC_POSTGRES_HOST to an external server`,
      }),
    );
  }
  const hostedDir = readHostedFolder(config.dataDir);
  const layout = managedPostgresLayout(hostedDir ?? config.dataDir);
  const user = findPostgresOsUser();
  const title = 'managed PostgreSQL server';
  if (runningAsRoot() && user === undefined) {
    checks.push(
      doctorCheck({
        id: 'postgres.server',
        title,
        required: false,
        status: 'warn',
        detail: `no system user ${POSTGRES_USER_CANDIDATES.join(' or ')} yet (PostgreSQL refuses to run as root)`,
        fix: `svc serve creates ${POSTGRES_USER_CANDIDATES[1]} at its first start; installing postgresql creates postgres`,
      }),
    );
    return checks;
  }
  const blocked = user ? firstBlockedFolder(nearestExisting(layout.base), user) : undefined;
  if (user && blocked !== undefined && hostedDir === undefined) {
    checks.push(
      doctorCheck({
        id: 'postgres.server',
        title,
        required: false,
        status: 'pass',
        detail: `runs as ${user.name}, which cannot enter ${blocked}: svc serve keeps the cluster in a hosted folder under ${HOSTED_ROOT} (ADR 0157)`,
      }),
    );
    return checks;
  }
  if (user && blocked !== undefined) {
    checks.push(
      doctorCheck({
        id: 'postgres.server',
        title,
        required: true,
        status: 'fail',
        detail: `runs as ${user.name}, which cannot enter ${blocked}`,
        fix: `setfacl -m u:${user.name}:x ${blocked} (or chmod o+x ${blocked}), or move SVC_DATA_DIR`,
      }),
    );
    return checks;
  }
  if (!fs.existsSync(layout.cluster)) {
    checks.push(
      doctorCheck({
        id: 'postgres.server',
        title,
        required: false,
        status: 'pass',
        detail: `no cluster yet in ${layout.cluster}: svc serve creates it at its first start (as ${user?.name ?? 'the current user'})`,
      }),
    );
    return checks;
  }
  const pid = readPostmasterPid(layout.cluster);
  const running = pid !== undefined && processAlive(pid.pid);
  checks.push(
    doctorCheck({
      id: 'postgres.server',
      title,
      required: false,
      status: running && pid.status === 'ready' ? 'pass' : 'warn',
      detail: running
        ? `running (pid ${pid.pid}, port ${pid.port}, socket ${pid.socketDir}, ${pid.status})`
        : `cluster ${layout.cluster} is not running (it runs while svc serve does)`,
      fix: running ? `it is starting or stopping: see ${layout.log}` : 'start the platform (npm start or svc serve)',
    }),
  );
  return checks;
}

function cgroupChecks(root?: string): DoctorCheck[] {
  const cpu = cgroupController('cpu', root);
  const memory = cgroupController('memory', root);
  const rss = fs.existsSync('/proc/self/status') && /VmRSS:/.test(fs.readFileSync('/proc/self/status', 'utf8'));
  return [
    doctorCheck({
      id: 'cgroups.cpu',
      title: 'CPU weights (resources.cpu)',
      required: false,
      status: cpu?.writable ? 'pass' : 'fail',
      detail: cpu
        ? `${cpu.kind} cpu controller ${cpu.writable ? 'writable' : 'not writable'}`
        : 'no cgroup cpu controller',
      fix: 'run svc serve as root on a host with cgroups mounted (a container needs a writable /sys/fs/cgroup), or as the systemd service of `svc install` (Delegate=yes, cgroup v2); without it apps run but resources.cpu is not applied',
    }),
    doctorCheck({
      id: 'cgroups.memory',
      title: 'memory limits (resources.memory)',
      required: false,
      status: rss ? 'pass' : 'fail',
      detail: `${rss ? "enforced by sampling each process tree's RSS from /proc" : '/proc/<pid>/status cannot be read: memory limits are not enforced'}; cgroup memory controller ${memory ? `${memory.kind}, ${memory.writable ? 'writable' : 'not writable'}` : 'absent'} (not needed)`,
      fix: "mount /proc (the local driver reads each process's VmRSS)",
    }),
  ];
}

async function portChecks(config: SvcConfig): Promise<DoctorCheck[]> {
  const ports = [
    { id: 'ports.control', title: 'control plane port (SVC_PORT)', port: config.port, health: '/api/health' },
    {
      id: 'ports.knowledge',
      title: 'knowledge store port (SVC_KNOWLEDGE_PORT)',
      port: config.knowledgePort,
      health: '/v1/ping',
    },
    {
      id: 'ports.knowledge-admin',
      title: 'knowledge admin port (SVC_KNOWLEDGE_ADMIN_PORT)',
      port: config.knowledgeAdminPort,
      health: '/healthz',
    },
  ];
  return Promise.all(
    ports.map(async ({ id, title, port, health }) => {
      if (port === 0)
        return doctorCheck({
          id,
          title,
          required: true,
          status: 'skip',
          detail: 'port 0: a free port is picked at start',
        });
      const state = await probePort(config.host, port);
      if (state === 'free')
        return doctorCheck({ id, title, required: true, status: 'pass', detail: `${config.host}:${port} is free` });
      const host = config.host.includes(':') ? `[${config.host}]` : config.host;
      if (state === 'in-use' && (await answers(`http://${host}:${port}${health}`)))
        return doctorCheck({
          id,
          title,
          required: true,
          status: 'pass',
          detail: `${config.host}:${port} is served by a running svc`,
        });
      return doctorCheck({
        id,
        title,
        required: true,
        status: 'fail',
        detail: `${config.host}:${port} ${state === 'in-use' ? 'is used by another program' : 'cannot be bound (permission)'}`,
        fix: `stop that program (\`ss -ltnp 'sport = :${port}'\` names it) or choose another port with the variable`,
      });
    }),
  );
}

/** Where the data folder's app-hosting subfolders live: in it, or in its hosted folder (ADR 0157). */
function layoutCheck(config: SvcConfig): DoctorCheck {
  const hostedDir = readHostedFolder(config.dataDir);
  return doctorCheck({
    id: 'data.layout',
    title: 'data folder layout',
    required: false,
    status: hostedDir === undefined || fs.existsSync(hostedDir) ? 'pass' : 'fail',
    detail:
      hostedDir === undefined
        ? `everything in ${config.dataDir}`
        : `private data (control.db, knowledge.db, apps, snapshots) in ${config.dataDir}; PostgreSQL cluster, releases, app data and app-hosting state in ${hostedDir}${fs.existsSync(hostedDir) ? '' : ' (missing)'}, linked from the data folder (${HOSTED_SUBFOLDERS.join(', ')})`,
    fix: `restore ${hostedDir ?? 'the hosted folder'} from a backup, or remove ${path.join(config.dataDir, HOSTED_MARKER)} and the links to start afresh`,
  });
}

function dataFolderChecks(config: SvcConfig): DoctorCheck[] {
  const dir = config.dataDir;
  const existing = nearestExisting(dir);
  const canWrite = writable(existing);
  const mode = fs.statSync(existing).mode & 0o777;
  const open = (mode & 0o022) !== 0;
  const free = freeDiskBytes(dir);
  const mib = (bytes: number) => `${Math.floor(bytes / 1024 / 1024)} MiB`;
  return [
    layoutCheck(config),
    doctorCheck({
      id: 'data.permissions',
      title: 'data folder (SVC_DATA_DIR)',
      required: true,
      status: !canWrite ? 'fail' : open ? 'warn' : 'pass',
      detail: `${dir}${existing === dir ? '' : ` (not created yet; nearest folder ${existing})`} mode ${mode.toString(8).padStart(4, '0')}, ${canWrite ? 'writable' : 'not writable'} by this user`,
      fix: canWrite
        ? `chmod go-w ${existing} (others may write in it)`
        : `make ${existing} writable by this user or set SVC_DATA_DIR`,
    }),
    doctorCheck({
      id: 'data.disk',
      title: 'free disk of the data folder',
      required: true,
      status: free >= config.capacityMinDiskBytes ? 'pass' : 'fail',
      detail: `${mib(free)} free (minimum SVC_CAPACITY_MIN_DISK ${mib(config.capacityMinDiskBytes)})`,
      fix: 'free disk space (old releases in <data>/releases, dumps in SVC_SNAPSHOTS_DIR) or move SVC_DATA_DIR',
    }),
  ];
}

/** Whether apps run as their own users (root), with private mounts, and can reach their folders below the data folder (ADR 0047). */
function appIsolationChecks(config: SvcConfig): DoctorCheck[] {
  if (config.schedulerDriver !== 'local') return [];
  const title = 'app isolation (per-app users, rlimits, private /tmp)';
  if (!runningAsRoot()) {
    const me = os.userInfo();
    return [
      doctorCheck({
        id: 'apps.users',
        title,
        required: false,
        status: 'warn',
        detail: `svc runs as ${me.username} (uid ${me.uid}), not root: apps share this user, so each app can read the platform's data folder, every other app's files, and signal their processes`,
        fix: 'run svc serve as root: each app then runs as its own system user svc-app-<name> without root groups',
      }),
    ];
  }
  const mounts = detectPrivateMounts();
  const checks = [
    doctorCheck({
      id: 'apps.users',
      title,
      required: false,
      status: mounts.available ? 'pass' : 'warn',
      detail: `apps run as their own system users (svc-app-<name>, created on first deploy) under RLIMIT_NOFILE ${DEFAULT_TASK_LIMITS.nofile} and RLIMIT_NPROC ${DEFAULT_TASK_LIMITS.nproc}; ${mounts.available ? 'each task has a private mount namespace (own /tmp, bind-mounted volumes)' : (mounts.reason ?? 'no private mount namespace')}`,
      fix: 'allow unshare --mount (CAP_SYS_ADMIN) for private /tmp and read-only volumes',
    }),
  ];
  // App users must pass through the folders above their releases: the data folder's, or its hosted folder's.
  const hostedDir = readHostedFolder(config.dataDir);
  const appsDir = hostedDir ?? config.dataDir;
  const blocked = firstBlockedFolder(nearestExisting(appsDir), { name: 'nobody', uid: 65534, gid: 65534 });
  checks.push(
    doctorCheck({
      id: 'apps.passage',
      title: 'app users can enter the folders above their releases',
      required: false,
      status: blocked === undefined || hostedDir === undefined ? 'pass' : 'fail',
      detail:
        blocked === undefined
          ? `every folder above ${appsDir} can be entered`
          : hostedDir === undefined
            ? `${blocked} cannot be entered by other users: svc serve keeps app folders in a hosted folder under ${HOSTED_ROOT} (ADR 0157)`
            : `${blocked} cannot be entered by other users: app processes cannot reach their releases`,
      fix: `chmod o+x ${blocked ?? 'that folder'} (enter, not list)`,
    }),
  );
  return checks;
}

async function clockCheck(): Promise<DoctorCheck> {
  const synced = await ntpSynchronized();
  if (synced === undefined)
    return doctorCheck({
      id: 'clock',
      title: 'clock synchronization (NTP)',
      required: false,
      status: 'skip',
      detail:
        'timedatectl is absent or cannot answer here (no systemd): not checked; token expiry, cron and event times rely on the host clock',
    });
  return doctorCheck({
    id: 'clock',
    title: 'clock synchronization (NTP)',
    required: false,
    status: synced ? 'pass' : 'fail',
    detail: synced ? 'synchronized (timedatectl)' : 'not synchronized (timedatectl)',
    fix: 'timedatectl set-ntp true (or run chrony or ntpd)',
  });
}
