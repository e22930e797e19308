// tier: quick
import test from 'ava';
import {
  HOST_PATHS,
  parsePlatformRelease,
  planInstall,
  planUninstall,
  releaseName,
  renderSettings,
  renderUnit,
  type PlatformRelease,
} from '../../../domain/host-install/index.js';

const release: PlatformRelease = {
  name: 'svc',
  version: '1.2.3',
  commit: 'a'.repeat(40),
  target: 'linux-x64',
  node: 'v20.20.2',
  builtAt: '2026-11-25T06:00:00.000Z',
};

test('planInstall creates the user before the folders it owns, the release before its links, and the unit last before daemon-reload', (t) => {
  const steps = planInstall(release, '/tmp/unpacked');
  const kinds = steps.map((s) => `${s.kind}${'path' in s ? ` ${s.path}` : ''}`);
  t.deepEqual(kinds, [
    'user',
    'directory /var/lib/svc',
    'directory /var/lib/svc/apps',
    'directory /etc/svc',
    'file /etc/svc/svc.env',
    'directory /opt/svc',
    'directory /opt/svc/releases',
    'release /opt/svc/releases/1.2.3',
    'symlink /opt/svc/current',
    'symlink /usr/local/bin/svc',
    'file /etc/systemd/system/svc.service',
    'systemd',
  ]);
  t.like(
    steps.find((s) => s.kind === 'file' && s.path === HOST_PATHS.settings),
    { mode: 0o600, keep: true },
  );
  t.like(
    steps.find((s) => s.kind === 'symlink' && s.path === HOST_PATHS.current),
    { target: 'releases/1.2.3' },
  );
});

test('planUninstall stops the service and removes only the unit and the command link', (t) => {
  const steps = planUninstall();
  t.deepEqual(
    steps.filter((s) => s.kind === 'remove').map((s) => s.path),
    [HOST_PATHS.unit, HOST_PATHS.command],
  );
  t.deepEqual(
    steps.filter((s) => s.kind === 'keep').map((s) => s.path),
    [HOST_PATHS.data, HOST_PATHS.settings, HOST_PATHS.prefix],
  );
  t.like(steps[0], { kind: 'systemd', command: 'disable-now' });
});

test('renderUnit restarts always, leaves app processes and cgroups to the platform, and runs the current release as svc', (t) => {
  const unit = renderUnit();
  for (const line of [
    'Restart=always',
    'StartLimitIntervalSec=0',
    'KillMode=process',
    'Delegate=yes',
    'User=svc',
    'ExecStart=/opt/svc/current/svc serve',
    'EnvironmentFile=/etc/svc/svc.env',
    'ProtectSystem=strict',
    'ReadWritePaths=/var/lib/svc /opt/svc',
    'Environment=SVC_PLATFORM_DIR=/opt/svc',
    'Environment=SVC_AGENT_RESTART_MODE=stop',
    'NoNewPrivileges=yes',
  ]) {
    t.true(unit.split('\n').includes(line), line);
  }
  // Each would break what the platform does: cgroups of apps, V8's JIT.
  t.false(/^ProtectControlGroups=/m.test(unit));
  t.false(/^MemoryDenyWriteExecute=/m.test(unit));
  t.snapshot(unit);
});

test('renderSettings points every folder at the data folder and sets no secret', (t) => {
  const settings = renderSettings();
  t.regex(settings, /^SVC_DATA_DIR=\/var\/lib\/svc$/m);
  t.regex(settings, /^SVC_APPS_DIR=\/var\/lib\/svc\/apps$/m);
  t.regex(settings, /^SVC_SNAPSHOTS_DIR=\/var\/lib\/svc\/snapshots$/m);
  t.false(/^SVC_API_TOKEN=/m.test(settings));
});

test('parsePlatformRelease accepts a manifest and names the first broken field', (t) => {
  t.deepEqual(parsePlatformRelease(JSON.parse(JSON.stringify(release))), release);
  t.like(parsePlatformRelease({ ...release, commit: null }), { commit: null });
  t.is(parsePlatformRelease({ ...release, version: '../1' }), 'version "../1" is not a plain version');
  t.is(parsePlatformRelease({ ...release, target: 3 }), 'target is not a non-empty string');
  t.is(parsePlatformRelease([]), 'name is not a non-empty string');
  t.is(parsePlatformRelease(null), 'not a JSON object');
  t.is(releaseName(release), 'svc-1.2.3-linux-x64');
});
