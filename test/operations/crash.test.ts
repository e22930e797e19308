// tier: full
import test from 'ava';
import { runCrashTest } from '../../bench/operations-crash.js';

test('operations survive SIGKILL of the control plane: none lost, none overlapping on an app, integrity ok', async (t) => {
  t.timeout(110_000);
  const result = await runCrashTest({ kills: 5, operations: 20, apps: 4, log: (line) => t.log(line) });
  t.log(JSON.stringify(result));
  t.is(result.submitted > 0, true);
  t.is(result.lost, 0);
  t.is(result.overlapping, 0);
  t.is(result.failedWithoutReason, 0);
  t.is(result.strandedAfterRestart, 0);
  t.is(result.integrity, 'ok');
});
