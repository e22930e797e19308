// tier: quick
import test from 'ava';
import { retrievalPathOf, webhookDeliveryResult } from '../../domain/knowledge/index.js';

test('retrievalPathOf names the one path a query runs, hybrid for several, nothing for none', (t) => {
  t.is(retrievalPathOf({ vector: [1] }, false), 'vector');
  t.is(retrievalPathOf({ vectors: [[1], [0, 1]] }, true), 'vector');
  t.is(retrievalPathOf({ text: 'pods' }, false), 'text');
  t.is(retrievalPathOf({ text: 'pods' }, true), 'hybrid', 'an embedder adds the vector path to a text query');
  t.is(retrievalPathOf({ seed_ids: ['a'] }, true), 'graph');
  t.is(retrievalPathOf({ seed_ids: ['a'], vector: [1] }, false), 'hybrid');
  t.is(retrievalPathOf({ text: '  ', seed_ids: [], vectors: [] }, true), undefined);
});

test('webhookDeliveryResult is delivered on success, retrying below the attempt limit and failed at it', (t) => {
  t.is(webhookDeliveryResult(true, 5, 5), 'delivered');
  t.is(webhookDeliveryResult(false, 4, 5), 'retrying');
  t.is(webhookDeliveryResult(false, 5, 5), 'failed');
});
