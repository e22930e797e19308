// tier: quick
import test from 'ava';
import fc from 'fast-check';
import { ReviewService } from '../../knowledge/review/review-service.js';
import { startReviewHarness } from './review-helpers.js';

test('the incrementally maintained review index always equals a full rebuild', async (t) => {
  const h = await startReviewHarness(t);
  const { writes, feedback, review, sources, nodes, core } = h.store.services;
  const thresholds = ReviewService.thresholds({ sourceRefutationThreshold: 2 });
  let run = 0;
  const op = fc.oneof(
    fc.record({
      kind: fc.constant('write' as const),
      confidence: fc.double({ min: 0, max: 1, noNaN: true }),
      claim: fc.option(fc.constantFrom('a', 'b'), { nil: undefined }),
      source: fc.constantFrom('s1', 's2'),
    }),
    fc.record({
      kind: fc.constant('feedback' as const),
      target: fc.nat(),
      action: fc.constantFrom('validate' as const, 'refute' as const, 'useful' as const, 'stale' as const),
    }),
    fc.record({ kind: fc.constant('retract' as const), target: fc.nat() }),
    fc.record({
      kind: fc.constant('label' as const),
      source: fc.constantFrom('s1', 's2'),
      credibility: fc.double({ min: 0.1, max: 1, noNaN: true }),
    }),
  );
  await fc.assert(
    fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 20 }), async (ops) => {
      const ns = `i${run++}`;
      const ids: string[] = [];
      await writes.write('default', ns, { content: 'seed', source_id: 's1' });
      for (const o of ops) {
        try {
          if (o.kind === 'write') {
            ids.push(
              (
                await writes.write('default', ns, {
                  content: `c${ids.length}`,
                  source_id: o.source,
                  confidence: o.confidence,
                  ...(o.claim
                    ? { properties: { subject: 'door', predicate: 'color', object: `${o.claim}${ids.length % 2}` } }
                    : {}),
                })
              ).node_id,
            );
          } else if (o.kind === 'feedback' && ids.length > 0) {
            await feedback.record('default', ns, ids[o.target % ids.length]!, o.action);
          } else if (o.kind === 'retract' && ids.length > 0) {
            const id = ids[o.target % ids.length]!;
            const source = core.nodes.support(core.nodes.current(id)[0]!.vid)[0];
            if (source) await nodes.retractSource('default', ns, id, { source_id: source, reason: 'test' });
          } else if (o.kind === 'label') {
            sources.label('default', ns, { source_id: o.source, credibility: o.credibility });
          }
        } catch {
          // Feedback on a retracted node and similar refusals are part of the sequence.
        }
        const namespace = core.namespace('default', ns);
        const incremental = review.signals(namespace, thresholds, core.now());
        const full = new ReviewService(core).signals(namespace, thresholds, core.now());
        if (JSON.stringify(incremental) !== JSON.stringify(full)) return false;
      }
      return true;
    }),
    { numRuns: 30 },
  );
  t.pass();
});
