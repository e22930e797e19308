import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { specKeyOf, watchSpecs, type SpecKey } from '../../platform/spec-watcher.js';
import { discoverSpecFiles } from '../../platform/spec-files.js';
import { tempDir } from '../helpers/temp-dir.js';

function nextKeys(count: number): { keys: SpecKey[]; push: (k: SpecKey) => void; done: Promise<void> } {
  const keys: SpecKey[] = [];
  let resolve!: () => void;
  const done = new Promise<void>((r) => (resolve = r));
  return {
    keys,
    done,
    push(k) {
      keys.push(k);
      if (keys.length >= count) resolve();
    },
  };
}

test('specKeyOf maps spec files, app folders and deploy groups to keys', (t) => {
  const root = '/apps';
  t.is(specKeyOf(root, '/apps/web/infraspec.yaml'), 'app:web');
  t.is(specKeyOf(root, '/apps/web'), 'app:web');
  t.is(specKeyOf(root, '/apps/deploy-groups/stack.yaml'), 'group:stack');
  t.is(specKeyOf(root, '/apps/web/server.mjs'), undefined);
  t.is(specKeyOf(root, '/apps/.git'), undefined);
  t.is(specKeyOf(root, '/apps/deploy-groups'), undefined);
});

test('watchSpecs reports an added, changed and removed spec by its key', async (t) => {
  const apps = tempDir(t);
  let probe = nextKeys(1);
  const watcher = await watchSpecs(apps, (k) => probe.push(k), { debounceMs: 10 });
  t.teardown(() => watcher.close());
  fs.mkdirSync(path.join(apps, 'web'));
  fs.writeFileSync(path.join(apps, 'web', 'infraspec.yaml'), 'name: web\n');
  await probe.done;
  t.deepEqual([...new Set(probe.keys)], ['app:web']);

  probe = nextKeys(1);
  fs.writeFileSync(path.join(apps, 'web', 'infraspec.yaml'), 'name: web\ndeploy: true\n');
  await probe.done;
  t.deepEqual(probe.keys, ['app:web']);

  probe = nextKeys(1);
  fs.mkdirSync(path.join(apps, 'deploy-groups'));
  fs.writeFileSync(path.join(apps, 'deploy-groups', 'stack.yaml'), 'name: stack\n');
  await probe.done;
  t.true(probe.keys.includes('group:stack'));

  probe = nextKeys(1);
  fs.rmSync(path.join(apps, 'web'), { recursive: true });
  await probe.done;
  t.is(probe.keys[0], 'app:web');
});

test('discoverSpecFiles lists apps and deploy groups and skips hidden folders', (t) => {
  const apps = tempDir(t);
  for (const dir of ['web', 'worker', '.git', 'deploy-groups', 'empty']) fs.mkdirSync(path.join(apps, dir));
  fs.writeFileSync(path.join(apps, 'web', 'infraspec.yaml'), 'name: web\n');
  fs.writeFileSync(path.join(apps, 'worker', 'infraspec.yaml'), 'name: worker\n');
  fs.writeFileSync(path.join(apps, '.git', 'infraspec.yaml'), 'name: hidden\n');
  fs.writeFileSync(path.join(apps, 'deploy-groups', 'stack.yml'), 'name: stack\n');
  t.deepEqual(
    discoverSpecFiles(apps).map((f) => `${f.kind}:${f.key}`),
    ['app:web', 'app:worker', 'deploy-group:stack'],
  );
  t.deepEqual(discoverSpecFiles(path.join(apps, 'missing')), []);
});
