// tier: quick
/**
 * The Markdown form of retry fatigue (feature review-handoff-retry-fatigue-markdown, ADR 0178): REST
 * `format=markdown` or `Accept: text/markdown`, and GraphQL `reviewHandoffRetryFatigueMarkdown`, render
 * the same figures as the JSON report.
 */
import test from 'ava';
import { gql, node, startReceiver, startReviewHarness } from './review-helpers.js';
import { request } from './knowledge-harness.js';
import { markdownText, retryFatigueMarkdown } from '../../domain/knowledge/retry-fatigue-markdown.js';

const W = '/v1/namespaces/n/review/handoff-webhooks';

test('The Markdown retry-fatigue report has one table row per target with the JSON report figures', async (t) => {
  const h = await startReviewHarness(t, { SVC_KNOWLEDGE_ALLOW_PRIVATE_TARGETS: 'true' });
  const id = await node(h, 'n', { content: 'refuted claim', source_id: 'blog', confidence: 0.8 });
  t.regex((await h.call('GET', `${W}/retry-fatigue?format=markdown`)).text, /No target has unresolved/);
  await h.call('POST', `/v1/namespaces/n/nodes/${id}/refute`);
  h.clock.advanceHours(30);
  const receiver = await startReceiver(t, () => ({ status: 503 }));
  const sent = await h.call('POST', `${W}/deliver`, {
    target_url: receiver.url,
    secret: 's3cret-value',
    execute: true,
  });
  t.is(sent.status, 200, sent.text);
  const json = (await h.call('GET', `${W}/retry-fatigue?preset=review-overdue`)).body;
  t.is(json.targets.length, 1);
  const md = await h.call('GET', `${W}/retry-fatigue?preset=review-overdue&format=markdown`);
  t.is(md.status, 200);
  t.regex(md.headers.get('content-type') ?? '', /^text\/markdown/);
  t.regex(md.text, /^# Retry fatigue: namespace n$/m);
  t.regex(md.text, /Preset: review-overdue · owner: - · escalation level: review\\_overdue/);
  const rows = md.text.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| Target'));
  t.is(rows.length, 1);
  const target = json.targets[0];
  t.is(
    rows[0],
    `| ${markdownText(receiver.url)} | ${target.candidates} | ${target.total_attempts} | ${target.ready} | ${target.waiting} | 503 | target answered 503 |`,
  );
  t.regex(md.text, /- Status families: 5xx \(1\)/);
  t.regex(md.text, /- Owners: unassigned \(1\)/);
  t.false(md.text.includes('s3cret-value'), 'the signing secret never appears');
  const byAccept = await request(`${h.store.url}${W}/retry-fatigue?preset=source-trust-anomaly`, {
    headers: { accept: 'text/markdown' },
  });
  t.regex(byAccept.text, /No target has unresolved/);
  const g = await gql(h, '{ reviewHandoffRetryFatigueMarkdown(namespace: "n", preset: "review-overdue") }');
  t.is(g.status, 200, g.text);
  t.is(
    g.body.data.reviewHandoffRetryFatigueMarkdown,
    md.text,
    'GraphQL renders the same document (the clock is fixed)',
  );
  const bad = await h.call('GET', `${W}/retry-fatigue?format=html`);
  t.is(bad.status, 400);
  t.is(bad.body.error.code, 'invalid_request');
});

test('markdownText keeps a hostile value inside its table cell', (t) => {
  const out = retryFatigueMarkdown({
    namespace: 'n',
    preset: null,
    owner: null,
    escalation_level: null,
    generatedAt: '2026-01-01T00:00:00.000Z',
    targets: [
      {
        target_url: 'http://x/a|b',
        candidates: 1,
        total_attempts: 1,
        ready: 1,
        waiting: 0,
        status_families: [],
        owners: [],
        escalation_levels: [],
        last_status_code: null,
        last_error: 'line one\n| injected | row |',
      },
    ],
  });
  const row = out.split('\n').find((l) => l.startsWith('| http'));
  t.truthy(row);
  // Unescaped pipes are the cell borders only: 8 for 7 cells.
  t.is(row!.replace(/\\\|/g, '').split('|').length - 1, 8);
  t.false(out.includes('\n| injected'));
});
