// tier: quick
import test from 'ava';
import {
  recommendCount,
  ScaleStabilizer,
  type ScaleObservation,
  type ScaleRecommendation,
} from '../../../domain/scaling/index.js';

const base: ScaleObservation = {
  metric: 'cpu',
  target: 50,
  current: 2,
  min: 1,
  max: 5,
  total: 100,
  sampled: 2,
  idle: false,
};

const cases: { title: string; observation: Partial<ScaleObservation>; count: number }[] = [
  { title: 'at its target keeps the count', observation: {}, count: 2 },
  { title: 'within the 10 % tolerance keeps the count', observation: { total: 108 }, count: 2 },
  { title: 'above the tolerance asks for ceil(total / target)', observation: { total: 120 }, count: 3 },
  { title: 'far above is capped at max', observation: { total: 1000 }, count: 5 },
  { title: 'below asks for fewer', observation: { total: 40 }, count: 1 },
  { title: 'never below min', observation: { total: 10, min: 2 }, count: 2 },
  { title: 'idle with min 0 asks for zero', observation: { min: 0, idle: true, total: 0 }, count: 0 },
  { title: 'idle with min 1 keeps one', observation: { min: 1, idle: true, total: 0 }, count: 1 },
  { title: 'a request with min 0 asks for at least one', observation: { min: 0, current: 0, total: 0.2 }, count: 1 },
  { title: 'no sample holds the current count', observation: { total: undefined, sampled: 0, current: 4 }, count: 4 },
  {
    title: 'no sample at zero with min 0 stays at zero',
    observation: { total: undefined, min: 0, current: 0 },
    count: 0,
  },
  { title: 'no sample still honours a raised min', observation: { total: undefined, current: 1, min: 3 }, count: 3 },
];

for (const c of cases) {
  test(`recommendCount: a metric ${c.title}`, (t) => {
    t.is(recommendCount({ ...base, ...c.observation }).count, c.count);
  });
}

test('recommendCount says the metric, its value per allocation, the allocations and the target', (t) => {
  const r = recommendCount({ ...base, metric: 'requests_in_flight', target: 2, total: 9, sampled: 3, current: 3 });
  t.is(r.count, 5);
  t.is(r.perAllocation, 3);
  t.is(r.reason, 'requests_in_flight 3 per allocation over 3 (target 2)');
});

const rec = (count: number): ScaleRecommendation => ({ count, perAllocation: count, reason: `asks ${count}` });

test('ScaleStabilizer scales out at once and scales in only after a full window of lower recommendations', (t) => {
  const s = new ScaleStabilizer(1000, 0);
  t.like(s.decide(100, 1, rec(3)), { from: 1, to: 3, direction: 'out' });
  // Lower recommendations inside the window after the change: held.
  t.is(s.decide(500, 3, rec(1)), undefined);
  t.is(s.decide(1000, 3, rec(1)), undefined);
  // A window after the change, with the 3 asked at t=100 aged out of the window (at 1100): scaled in.
  t.like(s.decide(1200, 3, rec(1)), { from: 3, to: 1, direction: 'in' });
});

test('ScaleStabilizer scales in to the highest count the window asked for, so one quiet pass does not drop to the floor', (t) => {
  const s = new ScaleStabilizer(1000, 0);
  t.is(s.decide(200, 4, rec(3)), undefined);
  t.is(s.decide(600, 4, rec(1)), undefined);
  const d = s.decide(1100, 4, rec(1));
  t.like(d, { from: 4, to: 3, direction: 'in' });
  t.regex(d!.reason, /highest count asked for in the stabilization window \(1 s\) was 3/);
});

test('ScaleStabilizer holds a scale-in while any recommendation of the window asked for the current count', (t) => {
  const s = new ScaleStabilizer(1000, 0);
  t.is(s.decide(1500, 2, rec(2)), undefined);
  t.is(s.decide(2000, 2, rec(1)), undefined);
  t.is(s.decide(2400, 2, rec(1)), undefined);
  t.like(s.decide(2600, 2, rec(1)), { to: 1 });
});

test('ScaleStabilizer waits a full window after a change made by someone else (a wake from zero)', (t) => {
  const s = new ScaleStabilizer(1000, 0);
  s.noteChange(5000);
  t.is(s.decide(5500, 1, rec(0)), undefined);
  t.like(s.decide(6000, 1, rec(0)), { from: 1, to: 0, direction: 'in' });
});

test('ScaleStabilizer gives a newly seen process a full window before any scale-in', (t) => {
  const s = new ScaleStabilizer(1000, 10_000);
  t.is(s.decide(10_500, 3, rec(1)), undefined);
  t.like(s.decide(11_000, 3, rec(1)), { to: 1 });
});
