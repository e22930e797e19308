// tier: quick
/**
 * The local driver's state file (ADR 0190, ADR 0201): an asynchronous save writes, fsyncs and renames
 * off the event loop, and a synchronous save (the driver's close) begun at any point of it wins.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { emptyDriverState, type DriverState } from '../../../platform/local-scheduler/driver-state.js';
import { StateFile } from '../../../platform/local-scheduler/state-file.js';
import { tempDir } from '../../helpers/temp-dir.js';

/** A state told apart by the job ids it holds. */
function stateNamed(name: string): DriverState {
  return { ...emptyDriverState(), jobs: { [name]: {} as DriverState['jobs'][string] } };
}

test('a synchronous save begun at any point of an asynchronous one stands, and no temporary file is left', async (t) => {
  const dir = tempDir(t);
  const file = new StateFile(dir);
  for (let i = 0; i < 40; i += 1) {
    const older = file.saveAsync(stateNamed(`async-${i}`));
    // From at once to after the rename: the synchronous save lands before, during or after each step.
    for (let turn = 0; turn < i % 20; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    file.save(stateNamed(`sync-${i}`));
    await older;
    t.deepEqual(Object.keys(file.load().jobs), [`sync-${i}`]);
  }
  // An asynchronous save alone replaces the state.
  await file.saveAsync(stateNamed('last'));
  t.deepEqual(Object.keys(file.load().jobs), ['last']);
  t.deepEqual(
    fs.readdirSync(dir).filter((name) => name.endsWith('.tmp')),
    [],
    `left: ${fs.readdirSync(dir).join(', ')} in ${path.basename(dir)}`,
  );
});
