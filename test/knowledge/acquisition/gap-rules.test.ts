// tier: quick
import test from 'ava';
import { detectGaps, type GapNode } from '../../../domain/knowledge/gap-detection.js';
import { planAcquisition, TASK_COSTS, taskId } from '../../../domain/knowledge/acquisition-plan.js';
import {
  classifyAttempt,
  connectorRetryCandidates,
  recommendConnectorRetry,
  type ConnectorAttempt,
} from '../../../domain/knowledge/acquisition-retry.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const HOUR = 3_600_000;

function node(id: string, over: Partial<GapNode> = {}): GapNode {
  return {
    id,
    content: `content ${id}`,
    labels: ['t'],
    confidence: 0.8,
    validFrom: NOW - HOUR,
    claimKey: null,
    claimValue: null,
    degree: 1,
    refutations: 0,
    staleMarks: 0,
    ...over,
  };
}

const covered = ['a', 'b', 'c'].map((id) => node(id));

const cases: { title: string; nodes: GapNode[]; expect: string[] }[] = [
  { title: 'a well covered topic has no gaps', nodes: covered, expect: [] },
  {
    title: 'a refuted node is a refuted gap',
    nodes: [...covered.slice(1), node('a', { refutations: 2 })],
    expect: ['refuted:a'],
  },
  {
    title: 'two values of one claim are contradicted gaps',
    nodes: [
      node('a', { claimKey: 'x', claimValue: '1' }),
      node('b', { claimKey: 'x', claimValue: '2' }),
      node('c', { claimKey: 'y', claimValue: '1' }),
    ],
    expect: ['contradicted:a', 'contradicted:b'],
  },
  {
    title: 'confidence below 0.4 is a low_confidence gap',
    nodes: [...covered.slice(1), node('a', { confidence: 0.1 })],
    expect: ['low_confidence:a'],
  },
  {
    title: 'confidence at the threshold is no gap',
    nodes: [...covered.slice(1), node('a', { confidence: 0.4 })],
    expect: [],
  },
  {
    title: 'a node marked stale is a stale gap',
    nodes: [...covered.slice(1), node('a', { staleMarks: 1 })],
    expect: ['stale:a'],
  },
  {
    title: 'a node older than 720 hours is a stale gap',
    nodes: [...covered.slice(1), node('a', { validFrom: NOW - 721 * HOUR })],
    expect: ['stale:a'],
  },
  {
    title: 'a topic with fewer than 3 nodes is thin',
    nodes: [node('a', { labels: ['x'] }), node('b', { labels: ['x'] })],
    expect: ['thin_topic:x'],
  },
  {
    title: 'a node without edges alone in its topic is isolated (and its topic thin)',
    nodes: [...covered, node('d', { labels: ['solo'], degree: 0 })],
    expect: ['thin_topic:solo', 'isolated:d'],
  },
  {
    title: 'a node without edges in a shared topic is not isolated',
    nodes: covered.map((n) => ({ ...n, degree: 0 })),
    expect: [],
  },
];

for (const c of cases) {
  test(`gap detection: ${c.title}`, (t) => {
    t.deepEqual(
      detectGaps(c.nodes, { now: NOW }).gaps.map((g) => g.id),
      c.expect,
    );
  });
}

test('gap detection orders by priority then id, reports coverage and is deterministic', (t) => {
  const nodes = [
    node('a', { refutations: 1 }),
    node('b', { confidence: 0.2 }),
    node('c'),
    node('d', { labels: ['solo'], degree: 0 }),
  ];
  const report = detectGaps(nodes, { now: NOW });
  t.deepEqual(
    report.gaps.map((g) => [g.id, g.priority]),
    [
      ['refuted:a', 90],
      ['low_confidence:b', 70],
      ['thin_topic:solo', 60],
      ['isolated:d', 20],
    ],
  );
  t.is(report.totalNodes, 4);
  t.is(report.coverageScore, 0.25);
  t.deepEqual(detectGaps([...nodes].reverse(), { now: NOW }), report);
  t.is(detectGaps([], { now: NOW }).coverageScore, 0);
  t.is(detectGaps(nodes, { now: NOW, maxGaps: 2 }).gaps.length, 2);
  t.is(detectGaps(nodes, { now: NOW, maxGaps: 2 }).totalGaps, 4);
});

test('gap fields: nearest topics, density and temporal gap', (t) => {
  const [gap] = detectGaps(
    [
      node('a', { labels: ['x', 'y'], refutations: 1, validFrom: NOW - 2 * HOUR }),
      node('b', { labels: ['x'] }),
      node('c', { labels: ['x'] }),
    ],
    { now: NOW, topK: 1 },
  ).gaps;
  t.like(gap, {
    id: 'refuted:a',
    nearestTopics: ['y'],
    densityScore: 0.3333,
    temporalGapSeconds: 7200,
    relatedNodeIds: ['a'],
  });
});

test('the plan maps gap kinds to task types with deterministic ids', (t) => {
  const report = detectGaps(
    [
      node('a', { refutations: 1 }),
      node('b', { staleMarks: 1 }),
      node('c'),
      node('d', { labels: ['solo'], degree: 0 }),
    ],
    { now: NOW },
  );
  const plan = planAcquisition('ns', report, 100);
  t.deepEqual(
    plan.tasks.map((x) => [x.type, x.gapId]),
    [
      ['verification', 'refuted:a'],
      ['research', 'thin_topic:solo'],
      ['refresh', 'stale:b'],
      ['crawl', 'isolated:d'],
    ],
  );
  t.is(plan.tasks[0]!.id, taskId('ns', 'verification', 'refuted:a'));
  t.regex(plan.tasks[0]!.id, /^acq_verification_[0-9a-f]{16}$/);
  t.not(taskId('other', 'verification', 'refuted:a'), plan.tasks[0]!.id);
  t.deepEqual(planAcquisition('ns', report, 100), plan);
  t.regex(plan.tasks[0]!.prompt, /Verify or refute/);
});

test('the plan never spends more than its budget and lets cheaper tasks fill the rest', (t) => {
  const report = detectGaps(
    [
      node('a', { refutations: 1 }),
      node('b', { staleMarks: 1 }),
      node('c'),
      node('d', { labels: ['solo'], degree: 0 }),
    ],
    { now: NOW },
  );
  for (const budget of [0, 1, 2, 3, 4, 5, 6, 7]) {
    const plan = planAcquisition('ns', report, budget);
    t.true(plan.budgetUsed <= budget, `budget ${budget}`);
    t.is(
      plan.tasks.reduce((n, x) => n + TASK_COSTS[x.type], 0),
      plan.budgetUsed,
    );
  }
  // verification (1) fits, research (3) does not fit in 2, refresh (1) does.
  t.deepEqual(
    planAcquisition('ns', report, 2).tasks.map((x) => x.type),
    ['verification', 'refresh'],
  );
  t.is(planAcquisition('ns', report, 2).deferred, 2);
  t.is(planAcquisition('ns', report, 100, 1).tasks.length, 1);
});

const classifications: [number | null, boolean, 'none' | 'retryable' | 'permanent'][] = [
  [200, true, 'none'],
  [null, false, 'retryable'],
  [500, false, 'retryable'],
  [503, false, 'retryable'],
  [429, false, 'retryable'],
  [408, false, 'retryable'],
  [400, false, 'permanent'],
  [404, false, 'permanent'],
  [302, false, 'permanent'],
];
for (const [status, success, expected] of classifications) {
  test(`a connector attempt answering ${status ?? 'nothing'} is ${expected}`, (t) => {
    t.is(classifyAttempt(status, success), expected);
  });
}

test('connector retry candidates are the unresolved failures; permanent ones are never ready', (t) => {
  const a = (key: string, success: boolean, statusCode: number | null, txTime: number): ConnectorAttempt => ({
    idempotencyKey: key,
    taskId: key.split('.')[0]!,
    connectorUrl: 'http://c',
    success,
    retryClass: classifyAttempt(statusCode, success),
    statusCode,
    requestSha256: 'h',
    error: success ? null : `answered ${statusCode}`,
    txTime,
  });
  const candidates = connectorRetryCandidates([
    a('x.1', false, 503, 1),
    a('y.1', false, 400, 2),
    a('x.1', true, 200, 3),
    a('z.1', false, null, 4),
  ]);
  t.deepEqual(
    candidates.map((c) => [c.taskId, c.retryClass, c.attempts]),
    [
      ['y', 'permanent', 1],
      ['z', 'retryable', 1],
    ],
  );
  const permanent = recommendConnectorRetry(candidates[0]!, 10 * HOUR);
  t.false(permanent.ready);
  t.regex(permanent.reason, /permanent failure/);
  const retryable = recommendConnectorRetry(candidates[1]!, 4 + 60_000);
  t.true(retryable.ready);
  t.is(retryable.delaySeconds, 60);
});
