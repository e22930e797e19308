// tier: quick
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { HOST_PATHS, planUninstall, renderUnit, type HostStep } from '../../../domain/host-install/index.js';
import { HostInstallError } from '../../../platform/errors.js';
import { applyHostSteps } from '../../../platform/host-install/index.js';
import { tempDir } from '../../helpers/temp-dir.js';

const unit: HostStep = {
  kind: 'file',
  path: HOST_PATHS.unit,
  mode: 0o644,
  content: renderUnit(),
  keep: false,
  what: 'systemd unit',
};
const reload: HostStep = { kind: 'systemd', command: 'daemon-reload', unit: 'svc.service' };

test('applyHostSteps rewrites a hand-edited unit and asks for a reload, and leaves a correct one alone', (t) => {
  const root = tempDir(t);
  t.deepEqual(
    applyHostSteps([unit, reload], { root }).map((r) => r.outcome),
    ['created', 'skipped'],
  );
  fs.appendFileSync(path.join(root, HOST_PATHS.unit), 'Nice=5\n');
  const edited = applyHostSteps([unit, reload], { root });
  t.deepEqual(
    edited.map((r) => r.outcome),
    ['updated', 'skipped'],
  );
  t.is(edited[0]!.detail, 'systemd unit /etc/systemd/system/svc.service (rewritten)');
  t.is(fs.readFileSync(path.join(root, HOST_PATHS.unit), 'utf8'), renderUnit());
  t.deepEqual(
    applyHostSteps([unit, reload], { root }).map((r) => r.outcome),
    ['unchanged', 'unchanged'],
  );
});

test('applyHostSteps leaves a command link that points elsewhere, and refuses a folder where a link belongs', (t) => {
  const root = tempDir(t);
  fs.mkdirSync(path.join(root, 'usr/local/bin'), { recursive: true });
  fs.symlinkSync('/opt/other/svc', path.join(root, HOST_PATHS.command));
  const reports = applyHostSteps(planUninstall(), { root });
  t.like(
    reports.find((r) => r.step.kind === 'remove' && r.step.path === HOST_PATHS.command),
    { outcome: 'kept', detail: 'command link /usr/local/bin/svc (not the link the install made: left alone)' },
  );
  t.is(fs.readlinkSync(path.join(root, HOST_PATHS.command)), '/opt/other/svc');

  fs.mkdirSync(path.join(root, HOST_PATHS.current), { recursive: true });
  const error = t.throws(
    () => applyHostSteps([{ kind: 'symlink', path: HOST_PATHS.current, target: 'releases/1.0.0' }], { root }),
    { instanceOf: HostInstallError },
  );
  t.regex(error.message, /opt\/svc\/current exists and is not a link$/);
});

test('applyHostSteps in a dry run reports the same outcomes and writes nothing', (t) => {
  const root = tempDir(t);
  const steps: HostStep[] = [
    { kind: 'directory', path: '/var/lib/svc', mode: 0o750, owner: 'root' },
    unit,
    { kind: 'symlink', path: HOST_PATHS.current, target: 'releases/1.0.0' },
  ];
  t.deepEqual(
    applyHostSteps(steps, { root, dryRun: true }).map((r) => r.outcome),
    ['created', 'created', 'created'],
  );
  t.deepEqual(fs.readdirSync(root), []);
});
