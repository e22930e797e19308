// tier: full
/**
 * A ranking never depends on rows the request may not see (docs/adr/0224). Two stores with the same
 * clock get the same conversation; one of them also gets rows the request cannot see (another
 * namespace's, an excluded or not-included source's, another label's, written after `known_at`,
 * valid only after `valid_at`, retracted, or expired), interleaved with the conversation so that they
 * sit beside its turns in write order. The same request must get the same results, with the same
 * scores, from both. The conversation's write order carries topic, so neighbouring-turn context is on.
 */
import test from 'ava';
import fc from 'fast-check';
import { isCoherent } from '../../domain/knowledge/retrieval/turn-context.js';
import { startHarness, type Harness } from './knowledge-harness.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const STEP = 1_000;

const TOPICS = [
  ['pottery', 'clay', 'kiln', 'glaze'],
  ['garden', 'tomatoes', 'compost', 'seedlings'],
  ['guitar', 'chords', 'strings', 'concert'],
  ['marathon', 'training', 'miles', 'sneakers'],
  ['bakery', 'sourdough', 'oven', 'croissants'],
  ['camping', 'tent', 'lake', 'campfire'],
  ['chess', 'opening', 'tournament', 'bishop'],
  ['painting', 'canvas', 'sunrise', 'brushes'],
] as const;
const DETAILS = ['yesterday', 'weekend', 'sister', 'friends', 'morning', 'finally', 'again', 'really', 'new', 'old'];

const KINDS = ['namespace', 'exclude', 'include', 'labels', 'known_at', 'valid_at', 'retracted', 'expired'] as const;
type Kind = (typeof KINDS)[number];

interface Plan {
  /** Per turn: its topic and two detail words. */
  readonly turns: readonly { topic: number; details: readonly [number, number] }[];
  /** Where invisible rows go: after which turn, and which topic's words they carry. */
  readonly extras: readonly { after: number; topic: number }[];
  readonly query: { topic: number; words: readonly [number, number] };
}

function turnText(i: number, turn: Plan['turns'][number]): string {
  const words = TOPICS[turn.topic]!;
  const speaker = i % 2 === 0 ? 'Ann' : 'Ben';
  return `${speaker}: the ${words[i % 4]} and the ${words[(i + 1) % 4]} ${DETAILS[turn.details[0]]} with ${DETAILS[turn.details[1]]} ${words[(i + 2) % 4]}`;
}

/** Conversations of 24-32 turns whose topic changes every 3-5 turns, rows to hide, and a question. */
const plans: fc.Arbitrary<Plan> = fc
  .tuple(
    fc.array(fc.tuple(fc.integer({ min: 0, max: TOPICS.length - 1 }), fc.integer({ min: 3, max: 5 })), {
      minLength: 8,
      maxLength: 8,
    }),
    fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: TOPICS.length - 1 })), { minLength: 1, maxLength: 4 }),
    fc.tuple(
      fc.integer({ min: 0, max: TOPICS.length - 1 }),
      fc.integer({ min: 0, max: 3 }),
      fc.integer({ min: 0, max: 3 }),
    ),
    fc.array(
      fc.tuple(fc.integer({ min: 0, max: DETAILS.length - 1 }), fc.integer({ min: 0, max: DETAILS.length - 1 })),
      {
        minLength: 40,
        maxLength: 40,
      },
    ),
  )
  .map(([blocks, extras, [qTopic, w1, w2], details]) => {
    const turns: { topic: number; details: readonly [number, number] }[] = [];
    for (const [topic, length] of blocks)
      for (let k = 0; k < length; k++) turns.push({ topic, details: details[turns.length % details.length]! });
    return {
      turns: turns.slice(0, 32),
      extras: extras.map(([at, topic]) => ({ after: at % Math.min(turns.length, 32), topic })),
      query: { topic: qTopic, words: [w1, w2 === w1 ? (w1 + 1) % 4 : w2] as const },
    };
  });

/** Two stores on clocks the test sets; `clock` applies to both. */
async function twoStores(t: Parameters<typeof startHarness>[0]) {
  let clock = T0;
  const env = { SVC_KNOWLEDGE_THESAURUS: 'off' };
  const seen = await startHarness(t, env, { now: () => clock });
  const hidden = await startHarness(t, env, { now: () => clock });
  return {
    seen,
    hidden,
    set: (at: number) => {
      clock = at;
    },
  };
}

/** The request for `kind`, given the time of the cut-off turn. */
function requestFor(kind: Kind, plan: Plan, cutoff: number, end: number): Record<string, unknown> {
  const words = TOPICS[plan.query.topic]!;
  const base = { text: `What about the ${words[plan.query.words[0]]} and ${words[plan.query.words[1]]}?`, top_k: 8 };
  switch (kind) {
    case 'exclude':
      return { ...base, exclude_source_ids: ['gossip'] };
    case 'include':
      return { ...base, include_source_ids: ['conversation'] };
    case 'labels':
      return { ...base, labels: ['chat'] };
    case 'known_at':
      return { ...base, known_at: new Date(cutoff).toISOString(), valid_at: new Date(cutoff).toISOString() };
    case 'valid_at':
    case 'expired':
      return { ...base, valid_at: new Date(end).toISOString() };
    default:
      return base;
  }
}

/** Writes one row the `kind` request cannot see, beside the turn just written. */
async function writeHidden(
  h: Harness,
  ns: string,
  kind: Kind,
  n: number,
  topic: number,
  end: number,
  setClock: (at: number) => void,
  at: number,
): Promise<void> {
  const words = TOPICS[topic]!;
  const content = `Cid: hidden ${n}: ${words.join(' and ')} ${words[0]} again`;
  const write = (body: Record<string, unknown>, into = ns) => h.write(into, { content, ...body });
  switch (kind) {
    case 'namespace':
      await write({ source_id: 'conversation', labels: ['chat'] }, `${ns}-other`);
      return;
    case 'exclude':
      await write({ source_id: 'gossip', labels: ['chat'] });
      return;
    case 'include':
      await write({ source_id: 'gossip', labels: ['chat'] });
      return;
    case 'labels':
      await write({ source_id: 'conversation', labels: ['note'] });
      return;
    case 'known_at':
      await write({ source_id: 'conversation', labels: ['chat'] });
      return;
    case 'valid_at':
      await write({ source_id: 'conversation', labels: ['chat'], valid_from: new Date(end + STEP).toISOString() });
      return;
    case 'retracted':
    case 'expired': {
      const written = await write({ source_id: 'conversation', labels: ['chat'] });
      // Retracted from its only source now, or valid only until just after it was written.
      const res = await h.call('POST', `/v1/namespaces/${ns}/nodes/${written.node_id}/retract-source`, {
        source_id: 'conversation',
        reason: 'test',
        ...(kind === 'expired' ? { effective_at: new Date(at + 1).toISOString() } : {}),
      });
      if (res.status >= 300) throw new Error(`retract-source answered ${res.status}: ${res.text}`);
      setClock(at);
      return;
    }
  }
}

/** What a result list says, node ids aside (they differ between the stores). */
function summary(results: any[]) {
  return results.map((r) => ({
    content: r.content,
    score: r.score,
    similarity: r.similarity_score,
    confidence: r.confidence_score,
    recency: r.recency_score,
    utility: r.utility_score,
    source: r.retrieval_source,
  }));
}

for (const kind of KINDS) {
  test(`rows a request cannot see never change its results or scores: ${kind}`, async (t) => {
    t.timeout(120_000);
    const stores = await twoStores(t);
    let run = 0;
    let withResults = 0;
    let withContext = 0;
    await fc.assert(
      fc.asyncProperty(plans, async (plan) => {
        run += 1;
        const ns = `talk-${run}`;
        const start = T0 + run * 10_000 * STEP;
        const end = start + (plan.turns.length + 1) * STEP;
        const cutoffTurn = Math.floor(plan.turns.length / 2);
        const cutoff = start + cutoffTurn * STEP;
        let hiddenCount = 0;
        if (isCoherent(plan.turns.map((turn, i) => turnText(i, turn)))) withContext += 1;
        for (const [i, turn] of plan.turns.entries()) {
          const at = start + i * STEP;
          stores.set(at);
          const body = { content: turnText(i, turn), source_id: 'conversation', labels: ['chat'] };
          await stores.seen.write(ns, body);
          await stores.hidden.write(ns, body);
          for (const extra of plan.extras.filter((e) => e.after === i)) {
            // Rows hidden by time travel are written after the cut-off.
            if (kind === 'known_at' && i < cutoffTurn) continue;
            await writeHidden(stores.hidden, ns, kind, hiddenCount++, extra.topic, end, stores.set, at);
          }
        }
        stores.set(end);
        const request = requestFor(kind, plan, cutoff, end);
        const expected = summary(await stores.seen.retrieve(ns, request));
        const actual = summary(await stores.hidden.retrieve(ns, request));
        if (expected.length > 0) withResults += 1;
        t.deepEqual(actual, expected, `${kind}: ${JSON.stringify(request)}`);
        return JSON.stringify(actual) === JSON.stringify(expected);
      }),
      { numRuns: 8, seed: 424242 + KINDS.indexOf(kind) },
    );
    t.true(withResults > 0, 'some requests found turns');
    t.true(withContext >= 4, `neighbouring-turn context was on in ${withContext} of ${run} conversations`);
  });
}
