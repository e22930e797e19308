// tier: quick
/**
 * Every `example_graphql` of the retry-fatigue presets, pasted as it is shown, runs against the served
 * GraphQL schema without errors (issue 29: they selected a `targets` field that RetryFatigueTarget lacks).
 */
import test from 'ava';
import { RETRY_FATIGUE_PRESETS } from '../../domain/knowledge/handoff-retry.js';
import { startHarness } from './knowledge-harness.js';

test('Each retry-fatigue preset example_graphql validates and runs against the served schema', async (t) => {
  const h = await startHarness(t);
  t.true(RETRY_FATIGUE_PRESETS.length >= 3);
  await h.write('examples', { content: 'a node, so the namespace exists', source_id: 'docs' });
  for (const preset of RETRY_FATIGUE_PRESETS) {
    const query = `{ ${preset.example_graphql.replaceAll('{ns}', 'examples')} }`;
    const res = await h.call('POST', '/graphql', { query });
    t.is(res.status, 200, preset.name);
    t.is(res.body.errors, undefined, `${preset.name}: ${JSON.stringify(res.body.errors)}`);
    t.true(Array.isArray(res.body.data.reviewHandoffRetryFatigue), preset.name);
  }
});
