/**
 * What `svc install` and `svc uninstall` do to a host, as a list of steps computed without looking
 * at the host (ADR 0141). platform/host-install/ applies the steps, each idempotently, and reports
 * what each did; `--dry-run` reports what each would do.
 */
import { RELEASE_EXECUTABLE, type PlatformRelease } from './platform-release.js';

/** Where an installed platform lives on the host. Absolute paths of the host, not of a `--root` prefix. */
export const HOST_PATHS = {
  /** Releases, one folder each, and the `current` link: the self-upgrade lane's `SVC_PLATFORM_DIR` (ADR 0087). */
  prefix: '/opt/svc',
  releases: '/opt/svc/releases',
  current: '/opt/svc/current',
  /** The command on the PATH. */
  command: '/usr/local/bin/svc',
  /** `SVC_DATA_DIR`: databases, releases of apps, snapshots. */
  data: '/var/lib/svc',
  settingsDir: '/etc/svc',
  /** The settings (`SVC_*` variables), read by the unit; mode 0600, it may hold tokens. */
  settings: '/etc/svc/svc.env',
  unit: '/etc/systemd/system/svc.service',
} as const;

/** The system user the service runs as. */
export const SERVICE_USER = 'svc';
/** The systemd unit's name. */
export const SERVICE_UNIT = 'svc.service';

/** Who owns a created folder or file. */
export type StepOwner = 'root' | 'service';

/** One change to the host. Each is idempotent: applying it to a host that has it already changes nothing. */
export type HostStep =
  | { readonly kind: 'user'; readonly name: string; readonly home: string }
  | { readonly kind: 'directory'; readonly path: string; readonly mode: number; readonly owner: StepOwner }
  /** Copies a release folder to `path` (replaced when it holds another build of the same version). */
  | { readonly kind: 'release'; readonly path: string; readonly from: string; readonly release: PlatformRelease }
  | { readonly kind: 'symlink'; readonly path: string; readonly target: string }
  /** `keep`: an existing file is left as it is (only its mode is corrected): it is the operator's. */
  | {
      readonly kind: 'file';
      readonly path: string;
      readonly mode: number;
      readonly content: string;
      readonly keep: boolean;
      readonly what: string;
    }
  /** Removes a file or a link (`linkTarget`: only while it still points there). */
  | { readonly kind: 'remove'; readonly path: string; readonly what: string; readonly linkTarget?: string }
  | { readonly kind: 'systemd'; readonly command: 'daemon-reload' | 'disable-now'; readonly unit: string }
  /** Something left in place on purpose, reported so the operator knows it is there. */
  | { readonly kind: 'keep'; readonly path: string; readonly what: string };

/** The unit file of the service. */
export function renderUnit(): string {
  return `# Written by \`svc install\`; \`svc uninstall\` removes it. Settings: ${HOST_PATHS.settings}.
[Unit]
Description=svc: self-hosted operations platform (control plane and knowledge store)
After=network-online.target
Wants=network-online.target
# Never give up restarting: the self-upgrade lane stops the API and counts on this unit to start
# current/svc again, also while a release that fails is being rolled back (ADR 0087).
StartLimitIntervalSec=0

[Service]
Type=simple
User=${SERVICE_USER}
Group=${SERVICE_USER}
# The self-upgrade lane (ADR 0087) keeps its releases beside the installed ones and swaps current;
# its host agent only stops the API, and Restart=always starts current/svc serve again. Settings in
# the EnvironmentFile override these.
Environment=SVC_PLATFORM_DIR=${HOST_PATHS.prefix}
Environment=SVC_AGENT_RESTART_MODE=stop
EnvironmentFile=${HOST_PATHS.settings}
WorkingDirectory=${HOST_PATHS.data}
ExecStart=${HOST_PATHS.current}/${RELEASE_EXECUTABLE} serve
Restart=always
RestartSec=2s
# SIGTERM lets in-flight requests finish; app processes are the platform's to stop: they keep
# running across a restart of the API and are adopted again (KillMode=process).
KillMode=process
TimeoutStopSec=30s
# The unit's cgroup is the service's to divide: app processes get their own cgroups under it.
Delegate=yes
LimitNOFILE=65536

# Hardening that leaves what the platform does to apps possible: it starts and signals app
# processes, writes cgroups (so no ProtectControlGroups), runs V8 (so no MemoryDenyWriteExecute)
# and writes only under its data folder and its releases. A SVC_DATA_DIR elsewhere needs its own
# ReadWritePaths.
NoNewPrivileges=yes
CapabilityBoundingSet=
RestrictSUIDSGID=yes
ProtectSystem=strict
ReadWritePaths=${HOST_PATHS.data} ${HOST_PATHS.prefix}
ProtectHome=read-only
PrivateTmp=yes
PrivateDevices=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectKernelLogs=yes
ProtectClock=yes
ProtectHostname=yes
LockPersonality=yes
RestrictRealtime=yes
RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK

[Install]
WantedBy=multi-user.target
`;
}

/** The settings file written at the first install (a later install keeps the operator's edits). */
export function renderSettings(): string {
  const data = HOST_PATHS.data;
  return `# svc settings: environment variables read by ${SERVICE_UNIT} (EnvironmentFile). Written once by
# \`svc install\`, then yours: a later install keeps this file. Every setting is in
# docs/configuration.md. Restart after an edit: systemctl restart svc
SVC_DATA_DIR=${data}
SVC_APPS_DIR=${data}/apps
SVC_SNAPSHOTS_DIR=${data}/snapshots
SVC_HOST=127.0.0.1
SVC_PORT=8800
SVC_KNOWLEDGE_PORT=7701
SVC_KNOWLEDGE_ADMIN_PORT=7702
SVC_LOG_LEVEL=info
# Without a control token the API is open to whoever reaches SVC_HOST (development only):
# SVC_API_TOKEN=
# SVC_PROFILE=production
# SVC_REQUIRE_EXPLICIT_AUTH=true
# Production requires signed platform releases (SVC_RELEASE_SIGNATURE_POLICY=require-signed): set a
# key that checks <archive>.sig and/or a verify hook (docs/platform-upgrades.md, "Release policy"):
# SVC_RELEASE_PUBLIC_KEY=/etc/svc/release.pub
# SVC_RELEASE_VERIFY_HOOK=
`;
}

/** The steps of `svc install` for `release`, found unpacked in `from`. */
export function planInstall(release: PlatformRelease, from: string): HostStep[] {
  const releaseDir = `${HOST_PATHS.releases}/${release.version}`;
  return [
    { kind: 'user', name: SERVICE_USER, home: HOST_PATHS.data },
    { kind: 'directory', path: HOST_PATHS.data, mode: 0o750, owner: 'service' },
    { kind: 'directory', path: `${HOST_PATHS.data}/apps`, mode: 0o750, owner: 'service' },
    { kind: 'directory', path: HOST_PATHS.settingsDir, mode: 0o755, owner: 'root' },
    { kind: 'file', path: HOST_PATHS.settings, mode: 0o600, content: renderSettings(), keep: true, what: 'settings' },
    // The service's own (ADR 0087): its host agent stages releases here and swaps `current`.
    { kind: 'directory', path: HOST_PATHS.prefix, mode: 0o755, owner: 'service' },
    { kind: 'directory', path: HOST_PATHS.releases, mode: 0o755, owner: 'service' },
    { kind: 'release', path: releaseDir, from, release },
    // Relative, so that the link is right wherever the tree is mounted (and under --root).
    { kind: 'symlink', path: HOST_PATHS.current, target: `releases/${release.version}` },
    { kind: 'symlink', path: HOST_PATHS.command, target: `${HOST_PATHS.current}/${RELEASE_EXECUTABLE}` },
    { kind: 'file', path: HOST_PATHS.unit, mode: 0o644, content: renderUnit(), keep: false, what: 'systemd unit' },
    { kind: 'systemd', command: 'daemon-reload', unit: SERVICE_UNIT },
  ];
}

/** The steps of `svc uninstall`: the service goes, the data, settings, releases and user stay. */
export function planUninstall(): HostStep[] {
  return [
    { kind: 'systemd', command: 'disable-now', unit: SERVICE_UNIT },
    { kind: 'remove', path: HOST_PATHS.unit, what: 'systemd unit' },
    { kind: 'systemd', command: 'daemon-reload', unit: SERVICE_UNIT },
    {
      kind: 'remove',
      path: HOST_PATHS.command,
      what: 'command link',
      linkTarget: `${HOST_PATHS.current}/${RELEASE_EXECUTABLE}`,
    },
    { kind: 'keep', path: HOST_PATHS.data, what: 'data' },
    { kind: 'keep', path: HOST_PATHS.settings, what: 'settings' },
    { kind: 'keep', path: HOST_PATHS.prefix, what: 'releases' },
  ];
}

/** What to tell the operator after an install. */
export function afterInstallHint(): string {
  return [
    'start it now and at every boot:  systemctl enable --now svc',
    'see it:                          systemctl status svc; journalctl -u svc -f; svc doctor',
    `settings:                        ${HOST_PATHS.settings} (then systemctl restart svc)`,
    `apps:                            ${HOST_PATHS.data}/apps (a git repository of <app>/infraspec.yaml)`,
  ].join('\n');
}
