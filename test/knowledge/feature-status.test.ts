// tier: quick
/**
 * The spec's "Versioning" 2: every feature entry is stable (an extension that is not stable is not
 * listed), and the retry-fatigue presets are advertised under the owner-groups entry.
 */
import test from 'ava';
import { startHarness } from './knowledge-harness.js';

const FATIGUE = '/v1/namespaces/n/review/handoff-webhooks/retry-fatigue';

test('Every feature over REST and GraphQL is stable, provider connectors and group-commit batch writes included', async (t) => {
  const h = await startHarness(t);
  const features = (await h.call('GET', '/v1/features')).body.features as any[];
  t.true(features.length > 0);
  for (const f of features) t.is(f.status, 'stable', f.name);
  const names = features.map((f) => f.name);
  for (const name of ['acquisition-provider-connectors', 'group-commit-batch-writes'])
    t.true(names.includes(name), name);
  const g = await h.call('POST', '/graphql', { query: '{ features { name status } }' });
  t.is(g.status, 200, g.text);
  t.deepEqual(
    g.body.data.features,
    features.map((f) => ({ name: f.name, status: 'stable' })),
  );
});

test('The retry-fatigue presets the API serves are advertised under the owner-groups entry, after retry fatigue', async (t) => {
  const h = await startHarness(t);
  await h.write('n', { content: 'a node so the namespace exists', source_id: 's' });
  const fatigue = await h.call('GET', FATIGUE);
  t.is(fatigue.status, 200, fatigue.text);
  const presets = (fatigue.body.presets as any[]).map((p) => p.name as string);
  t.deepEqual(presets, ['review-overdue', 'source-trust-anomaly', 'unassigned-review-overdue']);

  const features = (await h.call('GET', '/v1/features')).body.features as any[];
  const names = features.map((f) => f.name);
  const at = names.indexOf('review-handoff-retry-fatigue-owner-groups');
  t.true(at > 0, 'the owner-groups entry is listed');
  t.is(names[at - 1], 'review-handoff-retry-fatigue');
  const ownerGroups = features[at];
  t.like(ownerGroups, { status: 'stable', since: 'v0.1.0' });
  t.regex(ownerGroups.description, /owner/);
  for (const preset of presets) {
    t.true(ownerGroups.description.includes(preset), preset);
    t.false(features[at - 1].description.includes(preset), `${preset} is not under the retry-fatigue entry`);
    // Each preset the description names is one the route accepts.
    t.is((await h.call('GET', `${FATIGUE}?preset=${preset}`)).status, 200, preset);
  }
});
