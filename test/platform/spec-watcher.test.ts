// tier: quick
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { adaptiveDebounce, specKeyOf, watchSpecs, type SpecKey } from '../../platform/spec-watcher.js';
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

/** A clock whose time moves only when the test says so, firing due timers in order. */
function manualClock() {
  let now = 0;
  let nextId = 0;
  const timers = new Map<number, { at: number; fire: () => void }>();
  return {
    now: () => now,
    setTimer: (fire: () => void, ms: number) => {
      nextId += 1;
      timers.set(nextId, { at: now + ms, fire });
      return nextId;
    },
    clearTimer: (timer: unknown) => void timers.delete(timer as number),
    advance(ms: number) {
      const until = now + ms;
      for (;;) {
        const due = [...timers.entries()].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
        if (!due) break;
        timers.delete(due[0]);
        now = due[1].at;
        due[1].fire();
      }
      now = until;
    },
  };
}

test('the quiet period starts at 5 ms, doubles up to 20 ms for a key written in steps, and starts short again after 2 s of quiet', (t) => {
  const clock = manualClock();
  const reports: { key: string; at: number }[] = [];
  const debounce = adaptiveDebounce<string>((key) => reports.push({ key, at: clock.now() }), {}, clock);

  // One save: a burst of events microseconds apart, reported once, 5 ms after the last.
  debounce.event('app:web');
  clock.advance(1);
  debounce.event('app:web');
  debounce.event('app:api');
  clock.advance(10);
  t.deepEqual(reports, [
    { key: 'app:web', at: 6 },
    { key: 'app:api', at: 6 },
  ]);

  // A writer that goes on 8 ms after the report: reported early once, then its period grows.
  reports.length = 0;
  clock.advance(3); // 8 ms after the report
  debounce.event('app:web'); // period 10 ms
  clock.advance(8);
  t.deepEqual(reports, []);
  clock.advance(2);
  t.deepEqual(reports, [{ key: 'app:web', at: 24 }]);
  clock.advance(8);
  debounce.event('app:web'); // period 20 ms
  clock.advance(15);
  debounce.event('app:web'); // steps 15 ms apart are now one save
  clock.advance(19);
  t.is(reports.length, 1);
  clock.advance(1);
  t.deepEqual(reports[1], { key: 'app:web', at: 67 });
  clock.advance(50);
  debounce.event('app:web'); // never more than debounceMs
  clock.advance(20);
  t.deepEqual(reports[2], { key: 'app:web', at: 137 });

  // The other key kept its own short period; after 2 s of quiet this one starts short again.
  reports.length = 0;
  clock.advance(2_500);
  debounce.event('app:web');
  clock.advance(5);
  t.deepEqual(reports, [{ key: 'app:web', at: clock.now() }]);
  debounce.close();
});
