// tier: quick
import test from 'ava';
import { setCondition, summarizeReady, getCondition, type Condition } from '../../domain/status/conditions.js';

const t0 = new Date('2026-01-01T00:00:00Z');
const t1 = new Date('2026-01-01T00:05:00Z');

test('setCondition keeps the transition time while the status is unchanged', (t) => {
  let conditions: Condition[] = setCondition(
    [],
    { type: 'Valid', status: 'True', reason: 'SpecValid', message: 'ok' },
    t0,
  );
  conditions = setCondition(
    conditions,
    { type: 'Valid', status: 'True', reason: 'SpecValid', message: 'still ok' },
    t1,
  );
  t.is(getCondition(conditions, 'Valid')?.lastTransitionTime, t0.toISOString());
  t.is(getCondition(conditions, 'Valid')?.message, 'still ok');
  conditions = setCondition(conditions, { type: 'Valid', status: 'False', reason: 'SpecInvalid', message: 'bad' }, t1);
  t.is(getCondition(conditions, 'Valid')?.lastTransitionTime, t1.toISOString());
});

test('setCondition keeps the canonical order of condition types', (t) => {
  let conditions: Condition[] = [];
  for (const type of ['Ready', 'Routed', 'Healthy', 'Valid', 'Deployed'] as const) {
    conditions = setCondition(conditions, { type, status: 'Unknown', reason: 'X', message: '' }, t0);
  }
  t.deepEqual(
    conditions.map((c) => c.type),
    ['Valid', 'Deployed', 'Healthy', 'Routed', 'Ready'],
  );
});

test('summarizeReady is true only when every aspect is true', (t) => {
  let conditions: Condition[] = [];
  t.is(getCondition(summarizeReady(conditions, t0), 'Ready')?.status, 'Unknown');
  conditions = setCondition(conditions, { type: 'Valid', status: 'True', reason: 'SpecValid', message: 'ok' }, t0);
  conditions = setCondition(
    conditions,
    { type: 'Healthy', status: 'False', reason: 'ChecksFailing', message: 'web critical' },
    t0,
  );
  const notReady = getCondition(summarizeReady(conditions, t0), 'Ready');
  t.is(notReady?.status, 'False');
  t.is(notReady?.reason, 'HealthyFalse');
  t.regex(notReady?.message ?? '', /Healthy: web critical/);
  conditions = setCondition(
    conditions,
    { type: 'Healthy', status: 'True', reason: 'ChecksPassing', message: 'ok' },
    t1,
  );
  t.is(getCondition(summarizeReady(conditions, t1), 'Ready')?.status, 'True');
});
