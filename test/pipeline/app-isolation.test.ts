// tier: full
/**
 * A deployed app runs as its own user and reads nothing of the platform's data folder: control.db
 * (tokens included), knowledge.db, the scheduler state, mirrors, checkouts, secrets, the edge
 * credentials, snapshots; nor another app's release (ADR 0047). Checked as root, with the app's uid.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { ensureSystemUser } from '../../platform/local-scheduler/index.js';
import { getApp } from '../../store/control/apps.js';
import { startTestKnowledgeStore } from '../helpers/servers.js';
import { commitApp, deployAndWait, initAppsRepo, pipelineConfig, startPlane, waitForApp } from './pipeline-fixture.js';

const rootTest = process.getuid?.() === 0 ? test : test.skip;

function asUser(user: { uid: number; gid: number }, argv: string[]): { status: number | null; stderr: string } {
  const result = spawnSync(
    'setpriv',
    ['--reuid', String(user.uid), '--regid', String(user.gid), '--clear-groups', '--', ...argv],
    { encoding: 'utf8' },
  );
  return { status: result.status, stderr: result.stderr };
}

rootTest(
  'a deployed app runs as its own user and cannot read control.db, knowledge.db, edge credentials, snapshots or another app’s release',
  async (t) => {
    const config = pipelineConfig(t);
    const data = config.dataDir;
    // The operator's edge credentials, placed readable by mistake: the start closes them.
    fs.mkdirSync(path.join(data, 'edge'), { recursive: true });
    fs.writeFileSync(path.join(data, 'edge', 'svc.json'), '{"TunnelSecret":"x"}', { mode: 0o644 });
    fs.mkdirSync(path.join(data, 'snapshots'), { recursive: true, mode: 0o755 });
    fs.writeFileSync(path.join(data, 'snapshots', 'dump.sql'), 'secret rows', { mode: 0o644 });
    initAppsRepo(config);
    commitApp(config.appsDir, 'iso-one', { version: 'v1' });
    commitApp(config.appsDir, 'iso-two', { version: 'v1' });
    const plane = await startPlane(t, config);
    await startTestKnowledgeStore(t, config);
    await waitForApp(plane, 'iso-one');
    await waitForApp(plane, 'iso-two');
    t.is((await deployAndWait(plane, 'iso-one')).operation.status, 'succeeded');
    t.is((await deployAndWait(plane, 'iso-two')).operation.status, 'succeeded');

    const one = ensureSystemUser('svc-app-iso-one');
    const two = ensureSystemUser('svc-app-iso-two');
    const scheduler = await plane.reconcilers.targets.get('local');
    const [alloc] = await scheduler.listAllocations({ app: 'iso-one' });
    const status = fs.readFileSync(`/proc/${alloc!.task.pid!}/status`, 'utf8');
    t.regex(status, new RegExp(`^Uid:\\s+${one.uid}\\s+${one.uid}\\s+${one.uid}\\s+${one.uid}$`, 'm'));

    const platformFiles = [
      path.join(data, 'control.db'),
      path.join(data, 'knowledge.db'),
      path.join(data, 'scheduler', 'state.json'),
      path.join(data, 'edge', 'svc.json'),
      path.join(data, 'snapshots', 'dump.sql'),
    ];
    for (const file of platformFiles) {
      t.true(fs.existsSync(file), file);
      const read = asUser(one, ['cat', file]);
      t.not(read.status, 0, file);
      t.regex(read.stderr, /Permission denied/, file);
    }
    for (const folder of ['repos', 'work', 'secrets', 'edge', 'releases']) {
      t.regex(asUser(one, ['ls', path.join(data, folder)]).stderr, /Permission denied/, folder);
    }
    t.regex(asUser(one, ['ls', data]).stderr, /Permission denied/);

    // Its own release is readable and not writable; the other app's is closed to it.
    const ownRelease = path.join(getApp(plane.db, 'iso-one')!.release!.dir, 'app', 'server.mjs');
    const otherRelease = path.join(getApp(plane.db, 'iso-two')!.release!.dir, 'app', 'server.mjs');
    t.is(asUser(one, ['cat', ownRelease]).status, 0);
    t.not(asUser(one, ['test', '-w', ownRelease]).status, 0);
    t.regex(asUser(one, ['cat', otherRelease]).stderr, /Permission denied/);
    t.is(asUser(two, ['cat', otherRelease]).status, 0);
  },
);
