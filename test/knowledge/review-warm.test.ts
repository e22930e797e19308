// tier: quick
import test from 'ava';
import { createKnowledgeServices } from '../../knowledge/index.js';
import { ReviewService } from '../../knowledge/review/review-service.js';
import { openKnowledgeStore } from '../../store/open-stores.js';
import { tempDir } from '../helpers/temp-dir.js';

test('ReviewService.warm derives every namespace once so the first queue read rebuilds nothing', async (t) => {
  const store = openKnowledgeStore(tempDir(t));
  t.teardown(() => store.db.close());
  const services = createKnowledgeServices(store.db);
  const written = await services.writes.write('default', 'claims', {
    content: 'the bridge is open',
    source_id: 'scout',
    confidence: 0.1,
  });
  await services.writes.write('acme', 'notes', { content: 'ship it', source_id: 'ops' });
  await services.feedback.record('default', 'claims', written.node_id, 'refute');

  // A restarted process: fresh services over the same database.
  const restarted = createKnowledgeServices(store.db);
  t.is(restarted.review.warm(restarted.core.now()), 2);
  const ns = restarted.core.namespace('default', 'claims');
  t.is(restarted.review.rebuildsOf(ns), 1);
  const queue = restarted.review.queue('default', 'claims', {}, {}, 100);
  t.true(queue.total >= 1);
  t.is(restarted.review.rebuildsOf(ns), 1, 'the first read used the warmed index');
  t.is(new ReviewService(restarted.core).rebuildsOf(ns), 0);
});
