// tier: quick
import test from 'ava';
import { classifyMemory } from '../../controllers/apps/app-views.js';

const MB = 1024 * 1024;

test('classifyMemory marks peaks above 80% at risk, below 30% overprovisioned, else right sized', (t) => {
  t.is(classifyMemory(81 * MB, 100 * MB), 'at_risk');
  t.is(classifyMemory(80 * MB, 100 * MB), 'right_sized');
  t.is(classifyMemory(30 * MB, 100 * MB), 'right_sized');
  t.is(classifyMemory(29 * MB, 100 * MB), 'overprovisioned');
  t.is(classifyMemory(0, 0), 'overprovisioned');
});
