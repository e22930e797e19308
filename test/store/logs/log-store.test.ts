// tier: quick
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import type { CapturedLine } from '../../../domain/logs/index.js';
import { LINE_OVERHEAD_BYTES, LogStore } from '../../../store/logs/log-store.js';
import { tempDir } from '../../helpers/temp-dir.js';

function lines(app: string, count: number, at: number, text = (i: number) => `request ${i} GET /healthz 200`) {
  return Array.from({ length: count }, (_, i): CapturedLine => ({
    at: at + i,
    app,
    process: 'web',
    allocation: 'a1',
    release: 'r1',
    stream: 'stdout',
    line: text(i),
  }));
}

function open(t: ExecutionContext, options: { maxBytesPerApp?: number; now?: () => number } = {}) {
  const store = new LogStore({
    file: path.join(tempDir(t), 'logs.db'),
    maxBytesPerApp: options.maxBytesPerApp ?? 1 << 30,
    maxAgeMs: 3_600_000,
    ...(options.now ? { now: options.now } : {}),
  });
  t.teardown(() => store.close());
  return store;
}

test("the log store drops an app's oldest lines at its size bound, leaving other apps alone", (t) => {
  const perLine = 'request 0 GET /healthz 200'.length + LINE_OVERHEAD_BYTES;
  const store = open(t, { maxBytesPerApp: 1000 * perLine });
  store.append(lines('big', 1500, Date.now()), []);
  store.append(lines('small', 10, Date.now()), []);
  t.deepEqual(store.overBound(), ['big']);
  while (store.pruneStep());
  const usage = store.usage('big');
  t.true(usage.bytes <= 1000 * perLine, `${usage.bytes}`);
  t.true(usage.lines >= 850 && usage.lines <= 1000, `${usage.lines}`);
  const kept = store.query({ app: 'big', limit: 10_000 });
  t.is(kept.length, usage.lines);
  t.is(kept.at(-1)!.line, 'request 1499 GET /healthz 200', 'the newest stay');
  t.is(store.usage('small').lines, 10);
});

test('the log store drops lines past the age bound', (t) => {
  let now = 10_000_000;
  const store = open(t, { now: () => now });
  store.append(lines('app', 5, now - 7_200_000), []);
  store.append(lines('app', 3, now - 60_000), []);
  now += 1;
  while (store.pruneStep());
  t.is(store.query({ app: 'app', limit: 100 }).length, 3);
  t.is(store.usage('app').lines, 3);
});

test('the log store finds text in indexed and not yet indexed lines, newest last, with filters', (t) => {
  const store = open(t);
  store.append(
    lines('app', 3000, 1_000, (i) => (i % 1000 === 7 ? `payment failed for order ${i}` : `ok ${i}`)),
    [{ allocation: 'a1', stream: 'stdout', offset: 123 }],
  );
  while (store.indexStep(1000));
  store.append(
    lines('app', 10, 10_000, (i) => (i === 3 ? 'Payment FAILED again' : 'ok')),
    [],
  );
  t.is(store.unindexed(), 10);
  t.deepEqual(
    store.query({ app: 'app', grep: 'payment failed', limit: 10 }).map((l) => l.line),
    [
      'payment failed for order 7',
      'payment failed for order 1007',
      'payment failed for order 2007',
      'Payment FAILED again',
    ],
  );
  t.deepEqual(
    store.query({ app: 'app', grep: 'failed', limit: 2 }).map((l) => l.line),
    ['payment failed for order 2007', 'Payment FAILED again'],
  );
  t.is(store.query({ app: 'app', grep: 'failed', since: 10_000, limit: 10 }).length, 1);
  t.is(store.query({ app: 'app', grep: 'failed', stream: 'stderr', limit: 10 }).length, 0);
  t.is(store.offsetOf('a1', 'stdout'), 123);
  t.is(store.offsetOf('a1', 'stderr'), undefined);
});
