// tier: quick
import test from 'ava';
import fc from 'fast-check';
import { startReviewHarness } from './review-helpers.js';

test('decisions stay append-only and the effective state is always the latest decision', async (t) => {
  const h = await startReviewHarness(t);
  const { writes, review, core } = h.store.services;
  let run = 0;
  const decision = fc.record({
    item: fc.integer({ min: 0, max: 2 }),
    status: fc.constantFrom('open', 'assigned', 'snoozed', 'resolved'),
    owner: fc.option(fc.constantFrom('ana', 'bob', 'cy'), { nil: undefined }),
    decision: fc.option(fc.constantFrom('needs_evidence', 'confirmed', 'wrong'), { nil: undefined }),
    note: fc.option(fc.string({ minLength: 1, maxLength: 20 }), { nil: undefined }),
  });
  await fc.assert(
    fc.asyncProperty(fc.array(decision, { minLength: 1, maxLength: 25 }), async (steps) => {
      const ns = `p${run++}`;
      const nodes: string[] = [];
      for (let i = 0; i < 3; i++)
        nodes.push(
          (await writes.write('default', ns, { content: `weak ${i}`, source_id: 's', confidence: 0.1 })).node_id,
        );
      const applied: { review_id: string; status: string; owner: string | null }[] = [];
      const owners = new Map<string, string | null>();
      for (const step of steps) {
        const reviewId = `low_confidence:${nodes[step.item]}`;
        // An assignment needs an owner or a decision; give one when the generated step has neither.
        const owner =
          step.status === 'assigned' &&
          step.owner === undefined &&
          step.decision === undefined &&
          (owners.get(reviewId) ?? null) === null
            ? 'ana'
            : step.owner;
        const row = review.decide('default', ns, {
          review_id: reviewId,
          status: step.status,
          ...(owner !== undefined ? { owner } : {}),
          ...(step.decision !== undefined ? { decision: step.decision } : {}),
          ...(step.note !== undefined ? { note: step.note } : {}),
          ...(step.status === 'snoozed' ? { recheck_at: '2099-01-01T00:00:00Z' } : {}),
        });
        owners.set(reviewId, row.owner);
        applied.push({ review_id: row.review_id, status: row.status, owner: row.owner });
        // Append-only: the history is exactly what was recorded, in order, earlier entries unchanged.
        const history = review
          .decisions('default', ns)
          .map((d) => ({ review_id: d.review_id, status: d.status, owner: d.owner }));
        if (JSON.stringify(history) !== JSON.stringify(applied)) return false;
      }
      const items = review.items(
        core.namespace('default', ns),
        {
          lowConfidenceThreshold: 0.3,
          sourceTrustDropThreshold: 0.2,
          sourceRefutationThreshold: 3,
          escalationAfterHours: 24,
          sourceAnomalyEscalationPriority: 80,
        },
        core.now(),
      );
      for (const item of items) {
        const latest = review.decisions('default', ns, item.id).at(-1);
        const expected = latest ? latest.status : 'open';
        if (
          item.status !== expected ||
          item.owner !== (latest?.owner ?? null) ||
          item.decision !== (latest?.decision ?? null) ||
          item.note !== (latest?.note ?? null)
        )
          return false;
      }
      return items.length === 3;
    }),
    { numRuns: 40 },
  );
  t.pass();
});
