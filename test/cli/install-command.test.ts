// tier: full
/**
 * `svc install` and `svc uninstall` run for real into a host tree under a temporary folder
 * (`--root`): useradd edits that tree's account files, systemctl is not run, and the unit written
 * there passes `systemd-analyze verify`. The release installed is a folder shaped like the artifact's
 * (a manifest and an executable); test/package/artifact.test.ts installs the real artifact.
 */
import fs from 'node:fs';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { runSvc } from '../helpers/cli.js';
import { prepareHostRoot, systemdAnalyzeMissing, treeOf, verifyUnit } from '../helpers/host-root.js';
import { tempDir } from '../helpers/temp-dir.js';

const isRoot = process.getuid?.() === 0;
/** useradd and chown need root: without it these tests cannot run the real install. */
const asRoot = isRoot ? test : test.skip;

function release(t: ExecutionContext, version = '9.8.7', builtAt = '2026-11-25T06:00:00.000Z'): string {
  const dir = path.join(tempDir(t, 'svc-release-'), `svc-${version}-linux-x64`);
  fs.mkdirSync(path.join(dir, 'lib'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'svc'), '#!/bin/sh\necho "svc stand-in release"\n', { mode: 0o755 });
  fs.writeFileSync(path.join(dir, 'lib/part.so'), 'native part');
  fs.writeFileSync(
    path.join(dir, 'svc-release.json'),
    JSON.stringify({ name: 'svc', version, commit: 'c'.repeat(40), target: 'linux-x64', node: 'v20.20.2', builtAt }),
  );
  return dir;
}

function hostRoot(t: ExecutionContext): string {
  const root = tempDir(t, 'svc-host-');
  prepareHostRoot(root);
  return root;
}

/** `outcome  detail` lines of the output, without the header and the hint. */
function stepLines(stdout: string): string[] {
  return stdout
    .split('\n')
    .filter((line) => /^(would be )?(created|updated|unchanged|deleted|kept|skipped) /.test(line));
}

asRoot('svc install --dry-run prints every step it would take and changes nothing', async (t) => {
  const root = hostRoot(t);
  const from = release(t);
  const before = treeOf(root);
  const result = await runSvc(['install', '--dry-run', '--root', root, '--release', from]);
  t.is(result.code, 0, result.stderr);
  t.true(
    result.stdout.startsWith(
      `svc 9.8.7 (${'c'.repeat(40)}, linux-x64) from ${from}\ndry run: nothing is changed (under ${root})\n`,
    ),
    result.stdout,
  );
  t.deepEqual(stepLines(result.stdout), [
    'would be created    system user svc (home /var/lib/svc, no login shell)',
    'would be created    directory /var/lib/svc (mode 0750, owner the service user)',
    'would be created    directory /var/lib/svc/apps (mode 0750, owner the service user)',
    'would be created    directory /etc/svc (mode 0755, owner root)',
    'would be created    settings /etc/svc/svc.env (mode 0600)',
    'would be created    directory /opt/svc (mode 0755, owner the service user)',
    'would be created    directory /opt/svc/releases (mode 0755, owner the service user)',
    `would be created    release 9.8.7 at /opt/svc/releases/9.8.7 (from ${from})`,
    'would be created    link /opt/svc/current -> releases/9.8.7',
    'would be created    link /usr/local/bin/svc -> /opt/svc/current/svc',
    'would be created    systemd unit /etc/systemd/system/svc.service (mode 0644)',
    `skipped             systemctl daemon-reload (not run under --root ${root})`,
  ]);
  t.regex(result.stdout, /after the install:\nstart it now and at every boot: +systemctl enable --now svc/);
  t.deepEqual(treeOf(root), before, 'a dry run changed the tree');
});

asRoot(
  'svc install into a host tree creates the user, folders, settings, release, links and unit, and a second run changes nothing',
  async (t) => {
    const root = hostRoot(t);
    const from = release(t);
    const first = await runSvc(['install', '--root', root, '--release', from]);
    t.is(first.code, 0, first.stderr);
    t.deepEqual(
      stepLines(first.stdout).map((line) => line.split(/\s+/)[0]),
      [
        'created',
        'created',
        'created',
        'created',
        'created',
        'created',
        'created',
        'created',
        'created',
        'created',
        'created',
        'skipped',
      ],
    );

    const account = fs
      .readFileSync(path.join(root, 'etc/passwd'), 'utf8')
      .split('\n')
      .find((line) => line.startsWith('svc:'));
    t.truthy(account, 'useradd wrote the svc user into the tree');
    const [, , uid, gid, , home, shell] = account!.split(':');
    t.is(home, '/var/lib/svc');
    t.is(shell, '/usr/sbin/nologin');
    t.false(
      fs
        .readFileSync('/etc/passwd', 'utf8')
        .split('\n')
        .some((line) => line.startsWith('svc:')),
      'the host itself got a user',
    );
    const data = fs.statSync(path.join(root, 'var/lib/svc'));
    t.is(data.mode & 0o777, 0o750);
    t.is(data.uid, Number(uid));
    t.is(data.gid, Number(gid));
    t.is(fs.statSync(path.join(root, 'var/lib')).mode & 0o777, 0o755, 'parents keep the usual mode');
    const settings = path.join(root, 'etc/svc/svc.env');
    t.is(fs.statSync(settings).mode & 0o777, 0o600);
    t.is(fs.statSync(settings).uid, 0);
    t.is(fs.readlinkSync(path.join(root, 'opt/svc/current')), 'releases/9.8.7');
    t.is(fs.readlinkSync(path.join(root, 'usr/local/bin/svc')), '/opt/svc/current/svc');
    t.is(fs.readFileSync(path.join(root, 'opt/svc/current/lib/part.so'), 'utf8'), 'native part');
    t.regex(fs.readFileSync(path.join(root, 'etc/systemd/system/svc.service'), 'utf8'), /^Restart=always$/m);
    // The self-upgrade lane's folders are the service user's (ADR 0087); the installed release stays root's.
    for (const dir of ['opt/svc', 'opt/svc/releases'])
      t.like(fs.statSync(path.join(root, dir)), { uid: Number(uid), gid: Number(gid) }, dir);
    t.is(fs.statSync(path.join(root, 'opt/svc/releases/9.8.7')).uid, 0);

    // The operator's edit of the settings survives a second install, whose every step is unchanged.
    fs.appendFileSync(settings, 'SVC_LOG_LEVEL=debug\n');
    fs.chmodSync(settings, 0o644);
    const second = await runSvc(['install', '--root', root, '--release', from]);
    t.is(second.code, 0, second.stderr);
    const outcomes = stepLines(second.stdout);
    t.is(
      outcomes.find((line) => line.includes('/etc/svc/svc.env')),
      'updated    settings /etc/svc/svc.env (mode 0600 corrected)',
    );
    t.deepEqual(
      outcomes.filter((line) => !line.includes('/etc/svc/svc.env')).map((line) => line.split(/\s+/)[0]),
      Array(11).fill('unchanged'),
    );
    t.regex(fs.readFileSync(settings, 'utf8'), /SVC_LOG_LEVEL=debug\n$/);
    const third = await runSvc(['install', '--root', root, '--release', from]);
    t.deepEqual(
      stepLines(third.stdout).map((line) => line.split(/\s+/)[0]),
      Array(12).fill('unchanged'),
    );

    // Another version: installed beside the first, and `current` moves to it.
    const next = release(t, '9.9.0', '2026-11-26T06:00:00.000Z');
    const upgrade = await runSvc(['install', '--root', root, '--release', next]);
    t.is(upgrade.code, 0, upgrade.stderr);
    t.true(
      stepLines(upgrade.stdout).includes('updated    link /opt/svc/current -> releases/9.9.0 (was releases/9.8.7)'),
      upgrade.stdout,
    );
    t.deepEqual(fs.readdirSync(path.join(root, 'opt/svc/releases')).sort(), ['9.8.7', '9.9.0']);

    const missing = systemdAnalyzeMissing();
    if (missing) {
      t.log(`skipped: ${missing}`);
      return;
    }
    const verified = verifyUnit(root, 'svc.service');
    t.is(verified.code, 0, verified.output);
    t.is(verified.output.trim(), '', 'systemd-analyze verify has remarks on the unit');
  },
);

asRoot(
  'svc uninstall removes the unit and the command link, keeps data, settings, releases and user, and a second run changes nothing',
  async (t) => {
    const root = hostRoot(t);
    t.is((await runSvc(['install', '--root', root, '--release', release(t)])).code, 0);
    fs.writeFileSync(path.join(root, 'var/lib/svc/control.db'), 'data');
    const dry = await runSvc(['uninstall', '--dry-run', '--root', root]);
    t.is(dry.code, 0, dry.stderr);
    t.true(
      stepLines(dry.stdout).includes('would be deleted    systemd unit /etc/systemd/system/svc.service'),
      dry.stdout,
    );
    t.true(fs.existsSync(path.join(root, 'etc/systemd/system/svc.service')));

    const first = await runSvc(['uninstall', '--root', root]);
    t.is(first.code, 0, first.stderr);
    t.deepEqual(stepLines(first.stdout), [
      `skipped    systemctl disable --now svc.service (not run under --root ${root})`,
      'deleted    systemd unit /etc/systemd/system/svc.service',
      `skipped    systemctl daemon-reload (not run under --root ${root})`,
      'deleted    command link /usr/local/bin/svc',
      'kept       data /var/lib/svc (left in place)',
      'kept       settings /etc/svc/svc.env (left in place)',
      'kept       releases /opt/svc (left in place)',
    ]);
    t.false(fs.existsSync(path.join(root, 'etc/systemd/system/svc.service')));
    t.is(fs.readFileSync(path.join(root, 'var/lib/svc/control.db'), 'utf8'), 'data');
    t.true(fs.existsSync(path.join(root, 'etc/svc/svc.env')));
    t.true(fs.existsSync(path.join(root, 'opt/svc/current/svc')));
    t.regex(fs.readFileSync(path.join(root, 'etc/passwd'), 'utf8'), /^svc:/m);

    const second = await runSvc(['uninstall', '--root', root]);
    t.is(second.code, 0, second.stderr);
    t.true(
      stepLines(second.stdout).every((line) => /^(unchanged|kept|skipped) /.test(line)),
      second.stdout,
    );
  },
);

test('svc install without a release to install is a usage error, and as a user other than root it refuses to touch the host', async (t) => {
  const none = await runSvc(['install', '--dry-run']);
  t.is(none.code, 2);
  t.regex(
    none.stderr,
    /^error: this svc does not run from a release: run the svc of an unpacked release \(npm run package\), or pass --release <dir>/,
  );
  const notRelease = await runSvc(['install', '--dry-run', '--release', tempDir(t)]);
  t.is(notRelease.code, 2);
  t.regex(notRelease.stderr, /has no svc-release\.json/);
  if (!isRoot) {
    const refused = await runSvc(['install', '--release', release(t)]);
    t.is(refused.code, 1);
    t.regex(refused.stderr, /run it as root/);
  }
});
