/**
 * Retrieval-quality harness (not a test): `node --import tsx bench/retrieval-quality.ts
 * [--conversations N] [--turns T] [--seed S]`.
 *
 * [--sets synthetic,real] [--dump FILE]`.
 *
 * `--dump FILE` appends one JSON line per question (set, class, text, evidence, each system's ranked
 * turn ids) for looking at what each path misses; it holds the data's text, so keep it out of the repo.
 *
 * Two sets, each written turn by turn (each conversation in dialog order) through the HTTP API of two
 * real stores (one without an embedder, one with the local GloVe embedding server):
 * - `synthetic`: a conversational-memory corpus with known evidence (bench/lib/retrieval-corpus.ts);
 * - `real`: LoCoMo's dev conversations (bench/lib/locomo.ts), when `../shared/data/locomo-dev.json`
 *   is present: `svc` text against FTS5 bm25, each conversation in its own namespace and its own bm25
 *   table. Every configuration of the lexical ranker in `GRID` is asked every question; each
 *   conversation is then scored with the configuration that did best on the others (leave one
 *   conversation out, docs/adr/0225), printed beside the in-sample figure (the configuration best on
 *   all of them) and the shipped defaults.
 * On the synthetic set every question is asked, and evidence recall R@1, R@5, R@10 and MRR are printed
 * per question class for: SQLite FTS5 bm25 over the same rows in this process (porter tokenizer,
 * stopwords dropped, terms OR-ed: the baseline), `svc` text (lexical only), `svc` vector (the
 * question's embedding) and `svc` hybrid (text with the embedder: lexical and vector, fused).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { startKnowledgeStore, type KnowledgeStore } from '../wiring/knowledge-store.js';
import { loadConfig } from '../platform/config.js';
import { silentLogger } from '../platform/logger.js';
import { isStopword, tokenize } from '../domain/knowledge/retrieval/text-analysis.js';
import { percentile, positiveIntArg } from './lib/bench-args.js';
import { buildCorpus, type Turn } from './lib/retrieval-corpus.js';
import { QUESTION_KINDS } from './lib/retrieval-corpus-facts.js';
import { LOCOMO_PATH, loadLocomo } from './lib/locomo.js';
import { embedText, loadGlove, startEmbeddingServer } from './lib/glove-embedder.js';
import { measureRealLeaveOneOut } from './lib/real-set-quality.js';

const CONVERSATIONS = positiveIntArg('conversations', 10);
const TURNS = positiveIntArg('turns', 500);
const SEED = positiveIntArg('seed', 7);
const TOP_K = 10;
const SETS = (() => {
  const index = process.argv.indexOf('--sets');
  const sets = (index >= 0 ? (process.argv[index + 1] ?? '') : 'synthetic,real').split(',');
  if (sets.some((s) => s !== 'synthetic' && s !== 'real')) throw new Error('--sets takes synthetic, real or both');
  return new Set(sets);
})();

const DUMP = (() => {
  const index = process.argv.indexOf('--dump');
  return index >= 0 ? process.argv[index + 1] : undefined;
})();

/** A question with its evidence turn ids; `groups` are extra tallies it counts in (a split). */
interface Asked {
  readonly namespace: string;
  readonly text: string;
  readonly kind: string;
  readonly evidence: readonly string[];
  readonly groups?: readonly string[];
}

async function post(url: string, body: unknown): Promise<any> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${url} answered ${res.status}: ${JSON.stringify(json)}`);
  return json;
}

/** Runs `fn` over `items` with `width` requests in flight. */
async function pool<T>(items: readonly T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/** The FTS5 bm25 baseline over the same rows. */
function bm25Baseline(turns: readonly Turn[]): (q: Asked) => string[] {
  const db = new Database(':memory:');
  db.exec(
    `CREATE VIRTUAL TABLE t USING fts5(content, ns UNINDEXED, id UNINDEXED, tokenize = 'porter unicode61 remove_diacritics 2')`,
  );
  const insert = db.prepare('INSERT INTO t (content, ns, id) VALUES (?, ?, ?)');
  db.transaction(() => turns.forEach((turn) => insert.run(turn.content, turn.namespace, turn.id)))();
  const search = db.prepare('SELECT id FROM t WHERE t MATCH ? AND ns = ? ORDER BY bm25(t) LIMIT ?');
  return (q) => {
    const words = [...new Set(tokenize(q.text).filter((w) => !isStopword(w)))];
    if (words.length === 0) return [];
    return (search.all(words.map((w) => `"${w}"`).join(' OR '), q.namespace, TOP_K) as { id: string }[]).map(
      (r) => r.id,
    );
  };
}

interface Tally {
  n: number;
  r1: number;
  r5: number;
  r10: number;
  mrr: number;
}

function score(tally: Tally, ranked: readonly string[], evidence: readonly string[]): void {
  const recall = (k: number) => evidence.filter((e) => ranked.slice(0, k).includes(e)).length / evidence.length;
  const first = ranked.findIndex((id) => evidence.includes(id));
  tally.n += 1;
  tally.r1 += recall(1);
  tally.r5 += recall(5);
  tally.r10 += recall(10);
  tally.mrr += first < 0 ? 0 : 1 / (first + 1);
}

const SYSTEMS = ['bm25 (FTS5)', 'svc text', 'svc vector', 'svc hybrid'] as const;
type System = (typeof SYSTEMS)[number];

/** The two stores and the embedder every set is measured with. */
interface Rig {
  readonly lexical: KnowledgeStore;
  readonly hybrid: KnowledgeStore;
  readonly glove: ReturnType<typeof loadGlove>;
}

/** Writes `turns` to both stores (each namespace in order, 8 namespaces at a time) and asks `questions`. */
async function measure(
  rig: Rig,
  set: { name: string; turns: readonly Turn[]; questions: readonly Asked[]; kinds: readonly string[]; goal: number },
): Promise<void> {
  const { lexical, hybrid, glove } = rig;
  const { turns, questions, kinds } = set;
  console.log(`\n== ${set.name}: ${turns.length} turns, ${questions.length} questions`);
  const byNamespace = new Map<string, Turn[]>();
  for (const turn of turns) byNamespace.set(turn.namespace, [...(byNamespace.get(turn.namespace) ?? []), turn]);
  // Write every turn through HTTP, as an agent would, in dialog order; node ids map back to turn ids.
  const turnOf = new Map<string, string>();
  const writeStarted = performance.now();
  for (const store of [lexical, hybrid]) {
    await pool([...byNamespace.values()], 8, async (conversation) => {
      for (const turn of conversation) {
        const res = await post(`${store.url}/v1/namespaces/${turn.namespace}/write`, {
          content: turn.content,
          source_id: 'conversation',
          properties: { turn: turn.id, session_date: turn.date },
        });
        if (!res.admitted) throw new Error(`turn ${turn.id} was not admitted: ${res.reason}`);
        turnOf.set(res.node_id, turn.id);
      }
    });
  }
  console.log(
    `  wrote ${turns.length} turns to each of 2 stores over HTTP in ${((performance.now() - writeStarted) / 1000).toFixed(1)} s`,
  );

  const baseline = bm25Baseline(turns);
  const tallies = new Map<string, Tally>();
  const tally = (system: System, kind: string) => {
    const key = `${system}|${kind}`;
    let t = tallies.get(key);
    if (!t) tallies.set(key, (t = { n: 0, r1: 0, r5: 0, r10: 0, mrr: 0 }));
    return t;
  };
  const ids = (res: { results: { id: string }[] }) => res.results.map((r) => turnOf.get(r.id) ?? r.id);
  const latency: Record<string, number[]> = { 'svc text': [], 'svc vector': [], 'svc hybrid': [] };
  const timed = async (system: string, url: string, body: unknown) => {
    const started = performance.now();
    const res = await post(url, body);
    latency[system]!.push(performance.now() - started);
    return res;
  };
  const askStarted = performance.now();
  await pool(questions, 4, async (q) => {
    const url = (store: KnowledgeStore) => `${store.url}/v1/namespaces/${q.namespace}/retrieve`;
    const ranked: Record<System, string[]> = {
      'bm25 (FTS5)': baseline(q),
      'svc text': ids(await timed('svc text', url(lexical), { text: q.text, top_k: TOP_K })),
      'svc vector': ids(await timed('svc vector', url(hybrid), { vector: embedText(glove, q.text), top_k: TOP_K })),
      'svc hybrid': ids(await timed('svc hybrid', url(hybrid), { text: q.text, top_k: TOP_K })),
    };
    for (const system of SYSTEMS) {
      for (const kind of ['all', q.kind, ...(q.groups ?? [])]) score(tally(system, kind), ranked[system], q.evidence);
    }
    if (DUMP !== undefined) fs.appendFileSync(DUMP, `${JSON.stringify({ set: set.name, ...q, ranked })}\n`);
  });
  console.log(
    `  asked ${questions.length} questions x 3 svc paths in ${((performance.now() - askStarted) / 1000).toFixed(1)} s (4 in flight)`,
  );
  for (const [system, values] of Object.entries(latency)) {
    console.log(
      `    ${system} over HTTP: p50 ${percentile(values, 50).toFixed(2)} ms, p99 ${percentile(values, 99).toFixed(2)} ms (hybrid includes the embedder call)`,
    );
  }

  const f = (x: number) => x.toFixed(3);
  const groups = [...new Set(questions.flatMap((q) => q.groups ?? []))];
  for (const kind of ['all', ...kinds, ...groups]) {
    const n = tally('bm25 (FTS5)', kind).n;
    if (n === 0) continue;
    console.log(`\n  ${kind} (${n} questions)        R@1    R@5    R@10   MRR`);
    for (const system of SYSTEMS) {
      const t = tally(system, kind);
      console.log(`    ${system.padEnd(20)} ${f(t.r1 / t.n)}  ${f(t.r5 / t.n)}  ${f(t.r10 / t.n)}  ${f(t.mrr / t.n)}`);
    }
  }
  const r10 = (system: System, kind = 'all') => tally(system, kind).r10 / Math.max(1, tally(system, kind).n);
  console.log(
    `\n  ${set.name}: svc text R@10 / bm25 R@10: ${(r10('svc text') / r10('bm25 (FTS5)')).toFixed(2)}x (goal >= ${set.goal.toFixed(2)}x)`,
  );
  for (const group of groups) {
    console.log(`    ${group}: ${(r10('svc text', group) / r10('bm25 (FTS5)', group)).toFixed(2)}x`);
  }
  const below = kinds.filter((k) => tally('svc text', k).n > 0 && r10('svc text', k) < r10('bm25 (FTS5)', k));
  console.log(`  classes where svc text R@10 is below bm25: ${below.length === 0 ? 'none' : below.join(', ')}`);
  const better = Math.max(r10('svc text'), r10('svc vector'));
  console.log(
    `  hybrid R@10 ${f(r10('svc hybrid'))} vs text ${f(r10('svc text'))} and vector ${f(r10('svc vector'))}: ${r10('svc hybrid') >= better ? 'at or above the better single path' : 'BELOW the better single path'}`,
  );
}

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-quality-'));
const stores: KnowledgeStore[] = [];
try {
  console.log(`retrieval-quality: node ${process.version}, ${os.cpus().length} CPUs`);
  const config = (dir: string, env: Record<string, string> = {}) =>
    loadConfig({
      SVC_DATA_DIR: path.join(root, dir),
      SVC_KNOWLEDGE_PORT: '0',
      SVC_KNOWLEDGE_ADMIN_PORT: '0',
      SVC_LOG_LEVEL: 'silent',
      ...env,
    });
  if (SETS.has('synthetic')) {
    const loadStarted = performance.now();
    const glove = loadGlove();
    const embedder = await startEmbeddingServer(glove);
    console.log(
      `  GloVe SIF embedder loaded in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s (${glove.vectors.size} words, ${glove.dims} dims)`,
    );
    // Each set gets fresh stores, so that corpus statistics (document frequencies) are its own.
    const lexical = await startKnowledgeStore(config('synthetic-lexical'), silentLogger());
    stores.push(lexical);
    const hybrid = await startKnowledgeStore(
      config('synthetic-hybrid', {
        SVC_KNOWLEDGE_EMBEDDER_URL: embedder.url,
        SVC_KNOWLEDGE_EMBEDDER_MODEL: 'glove-sif-100d',
      }),
      silentLogger(),
    );
    stores.push(hybrid);
    const corpus = buildCorpus({ conversations: CONVERSATIONS, turnsPerConversation: TURNS, seed: SEED });
    await measure(
      { lexical, hybrid, glove },
      {
        name: `synthetic (${CONVERSATIONS} conversations of ${TURNS} turns, seed ${SEED})`,
        turns: corpus.turns,
        questions: corpus.questions,
        kinds: QUESTION_KINDS,
        goal: 1.15,
      },
    );
    await embedder.close();
  }
  if (SETS.has('real')) {
    const real = loadLocomo();
    if (!real) {
      console.log(`\n== real set: ${LOCOMO_PATH} is absent, skipped`);
    } else {
      const store = await startKnowledgeStore(config('real'), silentLogger());
      stores.push(store);
      await measureRealLeaveOneOut(store, real, DUMP);
    }
  }
} finally {
  for (const store of stores) await store.close();
  fs.rmSync(root, { recursive: true, force: true });
}
