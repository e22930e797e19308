// tier: quick
/**
 * The dashboard's reader of the Prometheus exposition: samples with labels, sums, and histogram
 * quantiles, with and without the per-path retrieval histogram, and lines it cannot read skipped.
 */
import test from 'ava';
import { histogramQuantile, labelValues, parseExposition, total } from '../../web/knowledge-admin/prometheus.js';

const TEXT = `# HELP svc_knowledge_writes_total Knowledge writes by outcome
# TYPE svc_knowledge_writes_total counter
svc_knowledge_writes_total{mode="general",outcome="admitted"} 7
svc_knowledge_writes_total{mode="general",outcome="rejected"} 2
svc_knowledge_retrieval_path_duration_seconds_bucket{path="text",le="0.005"} 2
svc_knowledge_retrieval_path_duration_seconds_bucket{path="text",le="0.01"} 6
svc_knowledge_retrieval_path_duration_seconds_bucket{path="text",le="+Inf"} 8
svc_knowledge_retrieval_path_duration_seconds_bucket{path="vector",le="0.005"} 0
svc_knowledge_retrieval_path_duration_seconds_bucket{path="vector",le="+Inf"} 0
svc_knowledge_label_escape{text="a \\"quoted\\" word"} 1
this line is not a sample
svc_knowledge_broken_value{path="x"} not-a-number
`;

test('parseExposition reads samples with labels and escapes and skips lines it cannot read', (t) => {
  const samples = parseExposition(TEXT);
  t.is(samples.length, 8);
  t.deepEqual(samples.find((s) => s.name === 'svc_knowledge_label_escape')?.labels, { text: 'a "quoted" word' });
  t.is(samples.find((s) => s.labels.le === '+Inf')?.value, 8);
});

test('total sums a counter over its labels and is undefined for a series that is not exported', (t) => {
  const samples = parseExposition(TEXT);
  t.is(total(samples, 'svc_knowledge_writes_total'), 9);
  t.is(total(samples, 'svc_knowledge_writes_total', { outcome: 'rejected' }), 2);
  t.is(total(samples, 'svc_knowledge_retrievals_total'), undefined);
  t.deepEqual(labelValues(samples, 'svc_knowledge_retrieval_path_duration_seconds_bucket', 'path'), ['text', 'vector']);
});

test('histogramQuantile interpolates inside the bucket and answers undefined without observations', (t) => {
  const samples = parseExposition(TEXT);
  const name = 'svc_knowledge_retrieval_path_duration_seconds';
  // 8 observations: rank 4 falls in (0.005, 0.01] holding 4 of them, half way in.
  t.is(histogramQuantile(samples, name, 0.5, { path: 'text' }), 0.0075);
  // Rank 7.6 falls in the +Inf bucket: the highest finite bound is the answer.
  t.is(histogramQuantile(samples, name, 0.95, { path: 'text' }), 0.01);
  t.is(histogramQuantile(samples, name, 0.5, { path: 'vector' }), undefined, 'no data');
  t.is(histogramQuantile(samples, 'svc_knowledge_retrieve_duration_seconds', 0.5), undefined, 'not exported');
});
