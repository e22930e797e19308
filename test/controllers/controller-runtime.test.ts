// tier: quick
import test from 'ava';
import { TerminalReconcileError } from '../../controllers/errors.js';
import { Controller, type Reconciler } from '../../controllers/runtime/controller.js';
import { WorkQueue } from '../../controllers/runtime/work-queue.js';
import { silentLogger } from '../../platform/logger.js';

test('a work queue hands each key out once however often it is added', async (t) => {
  const queue = new WorkQueue();
  queue.add('a');
  queue.add('b');
  queue.add('a');
  t.is(await queue.get(), 'a');
  t.is(await queue.get(), 'b');
  t.is(queue.depth, 2);
  queue.done('a');
  queue.done('b');
  t.is(queue.depth, 0);
});

test('a work queue re-queues a key added while it was being processed', async (t) => {
  const queue = new WorkQueue();
  queue.add('a');
  const key = await queue.get();
  t.is(key, 'a');
  queue.add('a');
  t.is(queue.depth, 1, 'not queued a second time while in flight');
  queue.done('a');
  t.is(await queue.get(), 'a');
});

test('a work queue backs off exponentially and forgets on success', (t) => {
  const queue = new WorkQueue({ baseMs: 10, maxMs: 35 });
  t.is(queue.addRateLimited('a'), 10);
  t.is(queue.addRateLimited('a'), 20);
  t.is(queue.addRateLimited('a'), 35);
  t.is(queue.failuresOf('a'), 3);
  queue.forget('a');
  t.is(queue.failuresOf('a'), 0);
  queue.shutDown();
});

test('a controller never reconciles one key on two workers at once', async (t) => {
  let active = 0;
  let maxActive = 0;
  const calls: string[] = [];
  const reconciler: Reconciler = {
    name: 'probe',
    listKeys: () => [],
    async reconcile(key) {
      active += 1;
      maxActive = Math.max(maxActive, active);
      calls.push(key);
      await new Promise((resolve) => setImmediate(resolve));
      active -= 1;
    },
  };
  const controller = new Controller(reconciler, silentLogger(), { workers: 4, resyncMs: 0 });
  await controller.start();
  for (let i = 0; i < 20; i += 1) controller.enqueue('same');
  await controller.whenIdle();
  await controller.stop();
  t.is(maxActive, 1);
  t.true(calls.length >= 1 && calls.length <= 2, `coalesced to ${calls.length} runs`);
});

test('a controller retries a failing key with backoff and stops on a terminal error', async (t) => {
  let attempts = 0;
  let terminalCalls = 0;
  let succeeded!: () => void;
  const success = new Promise<void>((resolve) => (succeeded = resolve));
  const reconciler: Reconciler = {
    name: 'flaky',
    listKeys: () => ['flaky', 'doomed'],
    async reconcile(key) {
      if (key === 'doomed') {
        terminalCalls += 1;
        throw new TerminalReconcileError('spec is invalid');
      }
      attempts += 1;
      if (attempts < 3) throw new Error('scheduler unavailable');
      succeeded();
    },
  };
  const controller = new Controller(reconciler, silentLogger(), { baseMs: 5, resyncMs: 0 });
  await controller.start();
  await success;
  await controller.whenIdle();
  await controller.stop();
  t.is(attempts, 3);
  t.is(controller.counts.failed, 2);
  t.is(terminalCalls, 1);
  t.is(controller.counts.terminal, 1);
});
