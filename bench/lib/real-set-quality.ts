/**
 * The real set's figure (docs/adr/0225): LoCoMo conversations, each in its own namespace of one store
 * and its own FTS5 bm25 table; every configuration of `GRID` asks every question in process; each
 * conversation is scored with the configuration chosen on the others.
 */
import fs from 'node:fs';
import Database from 'better-sqlite3';
import type { KnowledgeStore } from '../../wiring/knowledge-store.js';
import { RetrieveService } from '../../knowledge/retrieve/retrieve-service.js';
import { DEFAULT_LEXICAL_TUNING, type LexicalTuning } from '../../domain/knowledge/retrieval/lexical-tuning.js';
import { isStopword, tokenize } from '../../domain/knowledge/retrieval/text-analysis.js';
import { LOCOMO_CATEGORIES, type RealSet } from './locomo.js';
import { bestConfig, leaveOneOut, type Recalls, type Scored } from './leave-one-out.js';

const TOP_K = 10;

/** The configurations the choice is made among: the shipped defaults first. */
export const GRID: readonly { name: string; tuning: Partial<LexicalTuning> }[] = (() => {
  const name = (t: LexicalTuning) =>
    `context ${t.contextWeight}, b ${t.b}, coverage ${t.coverageWeight}, feedback ${t.feedbackDocs}/${t.feedbackTerms}/${t.feedbackWeight}`;
  const grid: { name: string; tuning: Partial<LexicalTuning> }[] = [
    { name: `shipped defaults (${name(DEFAULT_LEXICAL_TUNING)})`, tuning: {} },
  ];
  const add = (tuning: Partial<LexicalTuning>) => {
    const full = { ...DEFAULT_LEXICAL_TUNING, ...tuning };
    if (grid.some((g) => name({ ...DEFAULT_LEXICAL_TUNING, ...g.tuning }) === name(full))) return;
    grid.push({ name: name(full), tuning });
  };
  for (const contextWeight of [0, 0.3, 0.5, 0.7])
    for (const b of [0.5, 0.75]) add({ contextWeight, b, coverageWeight: 0 });
  // A bonus for holding more of the query's distinct words (docs/adr/0225).
  for (const coverageWeight of [0, 0.5, 1, 1.5, 3]) add({ coverageWeight });
  // Pseudo-relevance feedback on the defaults (docs/adr/0225).
  add({ feedbackDocs: 3, feedbackTerms: 10, feedbackWeight: 0.3 });
  add({ feedbackDocs: 5, feedbackTerms: 10, feedbackWeight: 0.5 });
  return grid;
})();

function recalls(ranked: readonly string[], evidence: readonly string[]): Recalls {
  const at = (k: number) => evidence.filter((e) => ranked.slice(0, k).includes(e)).length / evidence.length;
  return { r1: at(1), r5: at(5), r10: at(10) };
}

/** FTS5 bm25 over one conversation's turns (its own table, so its statistics are its own). */
function bm25Of(turns: readonly { id: string; content: string }[]): (text: string) => string[] {
  const db = new Database(':memory:');
  db.exec(
    `CREATE VIRTUAL TABLE t USING fts5(content, id UNINDEXED, tokenize = 'porter unicode61 remove_diacritics 2')`,
  );
  const insert = db.prepare('INSERT INTO t (content, id) VALUES (?, ?)');
  db.transaction(() => turns.forEach((turn) => insert.run(turn.content, turn.id)))();
  const search = db.prepare('SELECT id FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?');
  return (text) => {
    const words = [...new Set(tokenize(text).filter((w) => !isStopword(w)))];
    if (words.length === 0) return [];
    return (search.all(words.map((w) => `"${w}"`).join(' OR '), TOP_K) as { id: string }[]).map((r) => r.id);
  };
}

interface Totals {
  n: number;
  r1: number;
  r5: number;
  r10: number;
}

function add(t: Totals, r: Recalls): void {
  t.n += 1;
  t.r1 += r.r1;
  t.r5 += r.r5;
  t.r10 += r.r10;
}

/** Writes the set, asks every question under every configuration, prints in-sample and unseen figures. */
export async function measureRealLeaveOneOut(store: KnowledgeStore, real: RealSet, dump?: string): Promise<void> {
  console.log(
    `\n== real: LoCoMo dev, ${real.conversations.length} conversations, ${real.turns.length} turns, ${real.questions.length} questions, ${GRID.length} configurations`,
  );
  const turnOf = new Map<string, string>();
  const started = performance.now();
  for (const turn of real.turns) {
    const res = await store.services.writes.write('default', turn.namespace, {
      content: turn.content,
      source_id: 'conversation',
      properties: { turn: turn.id, session_date: turn.date },
    });
    if (!res.admitted) throw new Error(`turn ${turn.id} was not admitted`);
    turnOf.set(res.node_id, turn.id);
  }
  console.log(`  wrote the turns in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const baselines = new Map(
    [...new Set(real.turns.map((t) => t.namespace))].map((ns) => [
      ns,
      bm25Of(real.turns.filter((t) => t.namespace === ns)),
    ]),
  );
  const services = GRID.map((g) => new RetrieveService(store.services.core, g.tuning));
  const scored: Scored[] = [];
  const askStarted = performance.now();
  for (const q of real.questions) {
    const byConfig: Recalls[] = [];
    const ranked: Record<string, string[]> = {};
    for (const [i, service] of services.entries()) {
      const res = await service.retrieve('default', q.namespace, { text: q.text, top_k: TOP_K });
      const ids = res.results.map((r) => turnOf.get(r.id) ?? r.id);
      byConfig.push(recalls(ids, q.evidence));
      if (i === 0) ranked.svc = ids;
    }
    ranked.bm25 = baselines.get(q.namespace)!(q.text);
    scored.push({ conversation: q.conversation, kind: q.kind, byConfig, bm25: recalls(ranked.bm25, q.evidence) });
    if (dump !== undefined) fs.appendFileSync(dump, `${JSON.stringify({ ...q, ranked })}\n`);
  }
  console.log(
    `  asked ${real.questions.length} questions x ${GRID.length} configurations in ${((performance.now() - askStarted) / 1000).toFixed(1)} s`,
  );

  printGrid(scored, real.conversations);
  const inSample = bestConfig(scored, GRID.length);
  const unseen = leaveOneOut(scored, GRID.length);
  const rows: { label: string; recall: (q: Scored, i: number) => Recalls }[] = [
    { label: 'FTS5 bm25', recall: (q) => q.bm25 },
    { label: 'svc text, shipped defaults', recall: (q) => q.byConfig[0]! },
    { label: `svc text, in-sample best`, recall: (q) => q.byConfig[inSample]! },
    { label: 'svc text, unseen (leave one out)', recall: (_q, i) => unseen.recalls[i]! },
  ];
  const groups = ['all', ...LOCOMO_CATEGORIES, ...real.conversations.map((c) => `conversation ${c}`)];
  const inGroup = (q: Scored, g: string) =>
    g === 'all' || q.kind === g || (g.startsWith('conversation ') && `conversation ${q.conversation}` === g);
  const f = (x: number) => x.toFixed(3);
  const table = new Map<string, Map<string, Totals>>();
  for (const g of groups) {
    const perRow = new Map<string, Totals>();
    for (const row of rows) {
      const totals: Totals = { n: 0, r1: 0, r5: 0, r10: 0 };
      scored.forEach((q, i) => {
        if (inGroup(q, g)) add(totals, row.recall(q, i));
      });
      perRow.set(row.label, totals);
    }
    table.set(g, perRow);
  }
  console.log(`  in-sample best: ${GRID[inSample]!.name}`);
  for (const [c, config] of unseen.chosen) console.log(`  without ${c}: ${GRID[config]!.name}`);
  for (const g of groups) {
    const perRow = table.get(g)!;
    const base = perRow.get('FTS5 bm25')!;
    console.log(`\n  ${g} (${base.n} questions)                 R@1    R@5    R@10   R@1/bm25  R@10/bm25`);
    for (const row of rows) {
      const t = perRow.get(row.label)!;
      console.log(
        `    ${row.label.padEnd(34)} ${f(t.r1 / t.n)}  ${f(t.r5 / t.n)}  ${f(t.r10 / t.n)}  ${(t.r1 / Math.max(1e-9, base.r1)).toFixed(2)}x     ${(t.r10 / Math.max(1e-9, base.r10)).toFixed(2)}x`,
      );
    }
  }
  const all = table.get('all')!;
  const ratio = (label: string) => all.get(label)!.r10 / all.get('FTS5 bm25')!.r10;
  console.log(
    `\n  real: svc text R@10 / bm25, unseen ${ratio('svc text, unseen (leave one out)').toFixed(2)}x (goal >= 1.15x), in-sample ${ratio('svc text, in-sample best').toFixed(2)}x, shipped defaults ${ratio('svc text, shipped defaults').toFixed(2)}x`,
  );
  const worst = LOCOMO_CATEGORIES.map((c) => {
    const t = table.get(c)!;
    return { c, ratio: t.get('svc text, unseen (leave one out)')!.r10 / t.get('FTS5 bm25')!.r10 };
  }).sort((a, b) => a.ratio - b.ratio)[0]!;
  console.log(`  lowest category, unseen: ${worst.c} at ${worst.ratio.toFixed(2)}x (goal >= 0.97x)`);
}

/** Each configuration's R@10 over bm25's, and its objective (mean of R@1, R@5, R@10) per conversation. */
function printGrid(scored: readonly Scored[], conversations: readonly string[]): void {
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
  const bm25R10 = mean(scored.map((q) => q.bm25.r10));
  console.log(`  configurations: R@10/bm25, R@1/bm25, objective per conversation (${conversations.join(', ')})`);
  GRID.forEach((g, i) => {
    const r10 = mean(scored.map((q) => q.byConfig[i]!.r10)) / bm25R10;
    const r1 = mean(scored.map((q) => q.byConfig[i]!.r1)) / mean(scored.map((q) => q.bm25.r1));
    const perConversation = conversations.map((c) => {
      const mine = scored.filter((q) => q.conversation === c).map((q) => q.byConfig[i]!);
      return mean(mine.map((r) => (r.r1 + r.r5 + r.r10) / 3)).toFixed(3);
    });
    console.log(`    ${r10.toFixed(3)}x ${r1.toFixed(3)}x  ${perConversation.join(' ')}  ${g.name}`);
  });
}
