// tier: quick
import test from 'ava';
import fc from 'fast-check';
import { applyFeedback, FEEDBACK_ACTIONS } from '../../domain/knowledge/feedback-rules.js';
import {
  DEFAULT_REVIEW_THRESHOLDS,
  contradictionSignals,
  effectiveStatus,
  feedbackSignals,
  lowConfidenceSignals,
  matchesReviewFilters,
  reviewItemState,
  sourceAnomalySignal,
  type ReviewSignal,
} from '../../domain/knowledge/review-rules.js';
import { escalationDigest } from '../../domain/knowledge/escalation-digest.js';
import {
  recommendRetry,
  retryCandidates,
  retryDelaySeconds,
  statusFamily,
} from '../../domain/knowledge/handoff-retry.js';

const unit = fc.double({ min: 0, max: 1, noNaN: true });

test('feedback rules are bounded and monotone for every action and state', (t) => {
  fc.assert(
    fc.property(fc.constantFrom(...FEEDBACK_ACTIONS), unit, unit, unit, (action, confidence, utility, credibility) => {
      const out = applyFeedback(action, { confidence, utility, credibility });
      for (const v of [out.confidence, out.utility, out.credibility]) if (!(v >= 0 && v <= 1)) return false;
      const eps = 1e-9;
      switch (action) {
        case 'validate':
          return out.confidence >= confidence - eps && out.credibility >= credibility - eps && out.utility === utility;
        case 'refute':
          return (
            out.confidence <= Math.min(confidence, 0.1) + eps &&
            out.credibility <= credibility + eps &&
            out.utility === utility
          );
        case 'useful':
          return out.utility >= utility - eps && out.confidence === confidence && out.credibility === credibility;
        case 'stale':
          return out.confidence <= confidence + eps && out.utility <= utility + eps && out.credibility === credibility;
      }
    }),
  );
  t.is(applyFeedback('validate', { confidence: 1, utility: 0, credibility: 1 }).confidence, 1);
  t.regex(
    applyFeedback('stale', { confidence: 0.5, utility: 0.2, credibility: 0.6 }).explanation,
    /^stale: confidence 0.5 -> 0.35/,
  );
});

const signal = (over: Partial<ReviewSignal> = {}): ReviewSignal => ({
  id: 'refuted:a',
  type: 'refuted',
  priority: 70,
  reason: 'r',
  nodeId: 'a',
  nodeIds: ['a'],
  sourceId: 's',
  action: 'refute',
  createdAt: 0,
  lastSignalAt: 0,
  suggestedAction: 'needs_evidence',
  confidence: 0.1,
  ...over,
});

test('effective status: open without a decision, expired snoozes and resolutions older than new evidence reopen', (t) => {
  t.is(effectiveStatus(signal(), undefined, 10), 'open');
  const d = { owner: null, decision: null, note: null, recheckAt: null, txTime: 5 };
  t.is(effectiveStatus(signal(), { ...d, status: 'assigned' }, 10), 'assigned');
  t.is(effectiveStatus(signal(), { ...d, status: 'snoozed', recheckAt: 11 }, 10), 'snoozed');
  t.is(effectiveStatus(signal(), { ...d, status: 'snoozed', recheckAt: 10 }, 10), 'open');
  t.is(effectiveStatus(signal({ lastSignalAt: 4 }), { ...d, status: 'resolved' }, 10), 'resolved');
  t.is(effectiveStatus(signal({ lastSignalAt: 6 }), { ...d, status: 'resolved' }, 10), 'open');
});

test('escalation: overdue open or assigned items, anomalies by priority, never snoozed or resolved ones', (t) => {
  const T = DEFAULT_REVIEW_THRESHOLDS;
  const h = 3_600_000;
  t.false(reviewItemState(signal(), undefined, 23.9 * h, T).escalated);
  t.like(reviewItemState(signal(), undefined, 24 * h, T), {
    escalated: true,
    escalationLevel: 'review_overdue',
    escalationAgeHours: 24,
  });
  const d = { owner: 'x', decision: null, note: null, recheckAt: 99 * h, txTime: 1 };
  t.false(reviewItemState(signal(), { ...d, status: 'snoozed' }, 48 * h, T).escalated);
  t.true(reviewItemState(signal(), { ...d, status: 'assigned' }, 48 * h, T).escalated);
  t.like(reviewItemState(signal({ type: 'source_trust_anomaly', priority: 80 }), undefined, 0, T), {
    escalationLevel: 'source_trust_anomaly',
  });
  t.false(reviewItemState(signal({ type: 'source_trust_anomaly', priority: 79 }), undefined, 0, T).escalated);
});

test('signals: feedback counters, low confidence (not for covered nodes), contradictions by claim key', (t) => {
  const fb = feedbackSignals([
    {
      nodeId: 'a',
      sourceId: 's',
      refutations: 3,
      stale: 1,
      firstRefutedAt: 1,
      lastRefutedAt: 3,
      firstStaleAt: 2,
      lastStaleAt: 2,
      confidence: 0.1,
    },
  ]);
  t.deepEqual(
    fb.map((s) => [s.id, s.priority, s.suggestedAction, s.createdAt, s.lastSignalAt]),
    [
      ['refuted:a', 90, 'resolve', 1, 3],
      ['stale:a', 50, 'snooze', 2, 2],
    ],
  );
  const claim = (nodeId: string, confidence: number, key: string | null, value: string | null) => ({
    nodeId,
    confidence,
    txFrom: 1,
    sourceId: 's',
    claimKey: key,
    claimValue: value,
  });
  t.deepEqual(
    lowConfidenceSignals(
      [claim('a', 0.1, null, null), claim('b', 0, null, null), claim('c', 0.3, null, null)],
      0.3,
      new Set(['a']),
    ).map((s) => [s.id, s.priority]),
    [['low_confidence:b', 70]],
  );
  const c = contradictionSignals([
    claim('x', 0.9, 'k', 'v1'),
    claim('y', 0.4, 'k', 'v2'),
    claim('z', 0.9, 'k', 'v1'),
    claim('w', 0.9, 'other', 'v'),
  ]);
  t.deepEqual(
    c.map((s) => [s.id, s.nodeIds, s.suggestedAction]),
    [
      ['contradictory:x', ['x', 'y'], 'needs_evidence'],
      ['contradictory:y', ['y', 'x', 'z'], 'refute'],
      ['contradictory:z', ['z', 'y'], 'needs_evidence'],
    ],
  );
});

test('source anomaly runs start after the last label and are named after their first refuted node', (t) => {
  const p = (action: string, credibility: number, previous: number, nodeId: string | null, txTime: number) => ({
    action,
    credibility,
    previous,
    nodeId,
    txTime,
  });
  const timeline = [
    p('refute', 0.5, 0.6, 'old', 1),
    p('label', 0.6, 0.5, null, 2),
    p('refute', 0.54, 0.6, 'a', 3),
    p('validate', 0.563, 0.54, 'b', 4),
    p('refute', 0.5067, 0.563, 'c', 5),
  ];
  t.is(sourceAnomalySignal('s', timeline, DEFAULT_REVIEW_THRESHOLDS), undefined);
  const s = sourceAnomalySignal('s', timeline, { ...DEFAULT_REVIEW_THRESHOLDS, sourceRefutationThreshold: 2 });
  t.like(s, { id: 'source_trust_anomaly:a', createdAt: 3, lastSignalAt: 5, priority: 73 });
  t.deepEqual(s?.nodeIds, ['a', 'c']);
});

test('filters are additive and resolved items need an explicit status filter', (t) => {
  const item = reviewItemState(signal(), undefined, 0, DEFAULT_REVIEW_THRESHOLDS);
  t.true(matchesReviewFilters(item, {}));
  t.true(matchesReviewFilters(item, { types: ['refuted'], sourceId: 's', status: 'open', owner: 'unassigned' }));
  t.false(matchesReviewFilters(item, { types: ['refuted'], owner: 'ana' }));
  const resolved = reviewItemState(
    signal(),
    { status: 'resolved', owner: null, decision: null, note: null, recheckAt: null, txTime: 1 },
    2,
    DEFAULT_REVIEW_THRESHOLDS,
  );
  t.false(matchesReviewFilters(resolved, {}));
  t.true(matchesReviewFilters(resolved, { status: 'resolved' }));
});

test('the digest groups escalated items by owner, source, type and level', (t) => {
  const T = DEFAULT_REVIEW_THRESHOLDS;
  const now = 30 * 3_600_000;
  const items = [
    signal({ id: 'refuted:a' }),
    signal({ id: 'refuted:b', priority: 90, createdAt: 3_600_000 }),
    signal({ id: 'stale:c', type: 'stale', createdAt: now }),
  ].map((s) => reviewItemState(s, undefined, now, T));
  const d = escalationDigest(items);
  t.is(d.totalEscalated, 2);
  t.deepEqual(d.groups, [
    {
      owner: 'unassigned',
      sourceId: 's',
      type: 'refuted',
      escalationLevel: 'review_overdue',
      count: 2,
      maxPriority: 90,
      maxAgeHours: 30,
      reviewIds: ['refuted:a', 'refuted:b'],
    },
  ]);
  t.is(escalationDigest([]).note, 'no escalated review items');
});

test('retry pacing doubles per attempt, caps, and stops at the attempt limit; candidates resolve on success', (t) => {
  t.deepEqual([1, 2, 3, 4, 10].map(retryDelaySeconds), [60, 120, 240, 480, 21_600]);
  const a = (success: boolean, txTime: number, statusCode: number | null = 500) => ({
    digestEventId: 'd',
    targetUrl: 'u',
    success,
    statusCode,
    payloadSha256: 'h',
    error: success ? null : 'x',
    txTime,
  });
  t.deepEqual(retryCandidates([a(false, 1), a(true, 2)]), []);
  const [c] = retryCandidates([a(false, 1), a(false, 1000, null)]);
  t.like(c, { attempts: 2, lastStatusCode: null, lastAttemptAt: 1000 });
  t.like(recommendRetry(c!, 120_999), { ready: false, delaySeconds: 120, recommendedAfter: 121_000 });
  t.true(recommendRetry(c!, 121_000).ready);
  const exhausted = recommendRetry({ ...c!, attempts: 5 }, 1e12);
  t.false(exhausted.ready);
  t.regex(exhausted.reason, /reached the limit of 5/);
  t.deepEqual([200, 302, 404, 503, null].map(statusFamily), ['2xx', '3xx', '4xx', '5xx', 'network']);
});
