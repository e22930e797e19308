// tier: quick
import test from 'ava';
import { planGroup, type GroupDesire, type PlannedAllocation } from '../../../domain/scheduler/index.js';

const alloc = (id: string, index: number, fingerprint = 'v1', canary = false): PlannedAllocation => ({
  id,
  index,
  canary,
  fingerprint,
});
const desire = (count: number, extra: Partial<GroupDesire> = {}): GroupDesire => ({
  count,
  canary: 0,
  fingerprint: 'v1',
  promote: false,
  ...extra,
});

const cases: Array<
  [
    string,
    GroupDesire,
    PlannedAllocation[],
    { place: Array<[number, boolean]>; stop: string[]; promote: string[]; awaiting: boolean },
  ]
> = [
  [
    'nothing to do when allocations match',
    desire(2),
    [alloc('a', 0), alloc('b', 1)],
    { place: [], stop: [], promote: [], awaiting: false },
  ],
  [
    'scale up places the free indices',
    desire(3),
    [alloc('a', 0)],
    {
      place: [
        [1, false],
        [2, false],
      ],
      stop: [],
      promote: [],
      awaiting: false,
    },
  ],
  [
    'scale down stops the highest indices',
    desire(1),
    [alloc('a', 0), alloc('b', 1), alloc('c', 2)],
    { place: [], stop: ['c', 'b'], promote: [], awaiting: false },
  ],
  [
    'scale to zero stops everything',
    desire(0),
    [alloc('a', 0)],
    { place: [], stop: ['a'], promote: [], awaiting: false },
  ],
  [
    'a changed version without canaries rolls every allocation',
    desire(2, { fingerprint: 'v2' }),
    [alloc('a', 0), alloc('b', 1)],
    {
      place: [
        [0, false],
        [1, false],
      ],
      stop: ['a', 'b'],
      promote: [],
      awaiting: false,
    },
  ],
  [
    'a changed version with canaries places them beside the old ones',
    desire(2, { fingerprint: 'v2', canary: 1 }),
    [alloc('a', 0), alloc('b', 1)],
    { place: [[2, true]], stop: [], promote: [], awaiting: true },
  ],
  [
    'an existing canary is kept while awaiting promotion',
    desire(2, { fingerprint: 'v2', canary: 1 }),
    [alloc('a', 0), alloc('b', 1), alloc('c', 2, 'v2', true)],
    { place: [], stop: [], promote: [], awaiting: true },
  ],
  [
    'promotion stops the old ones, promotes the canary and fills the count',
    desire(2, { fingerprint: 'v2', canary: 1, promote: true }),
    [alloc('a', 0), alloc('b', 1), alloc('c', 2, 'v2', true)],
    { place: [[0, false]], stop: ['a', 'b'], promote: ['c'], awaiting: false },
  ],
  [
    'a canary setting with nothing outdated just scales',
    desire(2, { canary: 1 }),
    [],
    {
      place: [
        [0, false],
        [1, false],
      ],
      stop: [],
      promote: [],
      awaiting: false,
    },
  ],
];

for (const [title, desired, live, expected] of cases) {
  test(`planGroup: ${title}`, (t) => {
    const plan = planGroup(desired, live);
    t.deepEqual(
      {
        place: plan.place.map((p) => [p.index, p.canary]),
        stop: plan.stop,
        promote: plan.promote,
        awaiting: plan.awaitingPromotion,
      },
      expected,
    );
  });
}
