/**
 * The text index's merge work per group commit (docs/adr/0207), not a test:
 * `node --import tsx bench/text-merge.ts [--groups N] [--queries Q] [--usermerge N]`.
 *
 * Runs the synchronous part of group commits the way the knowledge store does (one transaction,
 * a savepoint per write, the text rows deferred to the group's end, COMMIT without fsync) with
 * bench/knowledge's text (Zipf words of a 5,000-word vocabulary, ~3.5 writes a group), and prints
 * the CPU each group held the thread for: the merge work FTS5 does inside a COMMIT shows as the
 * tail. Then the text index's segments and the CPU of text searches on them. CPU time (getrusage,
 * microseconds) rather than wall time, so a loaded machine moves it less. Run the same file in two
 * checkouts to compare them.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openKnowledgeStore } from '../store/open-stores.js';
import { NodeStore } from '../store/knowledge/node-store.js';
import { WalDurability } from '../store/knowledge/wal-durability.js';
import { OPEN_TIME } from '../store/knowledge/rows.js';
import { positiveIntArg, seededRandom } from './lib/bench-args.js';

const GROUPS = positiveIntArg('groups', 6000);
const QUERIES = positiveIntArg('queries', 3000);
const rand = seededRandom(7);
const VOCABULARY = Array.from({ length: 5000 }, (_, i) =>
  `w${i.toString(36)}x`.replace(/\d/g, (d) => 'abcdefghij'[Number(d)]!),
);
const text = (i: number) => {
  const words: string[] = [];
  for (let k = 0; k < 12; k++) words.push(VOCABULARY[Math.floor(Math.pow(rand(), 3) * VOCABULARY.length)]!);
  words.push(`topic${i % 50}`);
  if (i % 10 === 0) words.push(`ERR-${i}`);
  return words.join(' ');
};
const cpu = () => {
  const c = process.cpuUsage();
  return c.user + c.system;
};
const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-text-merge-'));
try {
  const opened = openKnowledgeStore(root);
  const db = opened.db;
  db.pragma('wal_autocheckpoint = 0'); // no checkpoint in a group: only the text index's work varies
  // --usermerge N: the level size FTS5's 'merge' waits for (4 by default), to compare the trade-off (ADR 0207).
  const usermerge = process.argv.includes('--usermerge') ? positiveIntArg('usermerge', 4) : undefined;
  if (usermerge !== undefined) db.exec(`INSERT INTO kn_text(kn_text, rank) VALUES('usermerge', ${usermerge})`);
  const nodes = new NodeStore(db);
  const wal = new WalDurability(db);
  const ns = nodes.createNamespace('default', 'bench', 'general', Date.now());
  const groupCpu: number[] = [];
  const structure = db.prepare('SELECT block FROM kn_text_data WHERE id = 10').pluck();
  const { decodeStructure } = await import('../store/knowledge/text-merge.js').catch(() => ({
    decodeStructure: undefined,
  }));
  const read = () => {
    const block = structure.get() as Buffer | undefined;
    return block && decodeStructure?.(block);
  };
  const shapeOf = (shape: ReturnType<typeof read>) =>
    shape ? shape.levels.map((l) => `${l.segments}${l.merging ? `*${l.merging}` : ''}:${l.pages}`).join(' ') : '';
  /** Pages a group's merges wrote: what levels above 0 gained (merge output lands one level up). */
  const mergedPages = (a: ReturnType<typeof read>, b: ReturnType<typeof read>) =>
    a && b ? b.levels.reduce((n, l, i) => n + (i === 0 ? 0 : Math.max(0, l.pages - (a.levels[i]?.pages ?? 0))), 0) : 0;
  const merges: { pages: number; us: number }[] = [];
  const longest: { us: number; before: string; after: string }[] = [];
  let written = 0;
  const c0 = cpu();
  for (let g = 0; g < GROUPS; g++) {
    const size = 1 + Math.floor(rand() * 6); // 1-6, ~3.5 a group as the 8-client bench
    const was = read();
    const start = cpu();
    wal.commitUnsynced(() =>
      nodes.deferText(() => {
        for (let k = 0; k < size; k++) {
          const i = written++;
          const id = `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
          wal.savepoint(() =>
            nodes.insertFirstVersion(
              null,
              {
                node_id: id,
                ns_id: ns.id,
                content: text(i),
                labels: '[]',
                properties: '{}',
                confidence: 0.5,
                utility: 0,
                mem_type: null,
                model_id: null,
                fingerprint: `f${i}`,
                claim_key: null,
                claim_value: null,
                dims: null,
                valid_from: 0,
                valid_to: OPEN_TIME,
                tx_from: i + 1,
                tx_to: OPEN_TIME,
                retracted: 0,
                change: 'create',
              },
              ['bench'],
            ),
          );
        }
      }),
    );
    const us = cpu() - start;
    groupCpu.push(us);
    const now = read();
    const pages = mergedPages(was, now);
    if (pages > 0) merges.push({ pages, us });
    if (longest.length < 5 || us > longest.at(-1)!.us) {
      longest.push({ us, before: shapeOf(was), after: shapeOf(now) });
      longest.sort((a, b) => b.us - a.us).splice(5);
    }
  }
  const total = cpu() - c0;
  groupCpu.sort((a, b) => a - b);
  const over = (ms: number) => groupCpu.filter((us) => us > ms * 1000).length;
  console.log(
    `text-merge bench: ${GROUPS} groups, ${written} writes; load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  console.log(
    `  CPU per write ${(total / written).toFixed(1)} us; per group p50/p99/p99.9/max ${pct(groupCpu, 50)}/${pct(groupCpu, 99)}/${pct(groupCpu, 99.9)}/${groupCpu.at(-1)} us; groups over 3/5/10 ms: ${over(3)}/${over(5)}/${over(10)}`,
  );
  merges.sort((a, b) => b.pages - a.pages);
  if (decodeStructure)
    console.log(
      `  groups that merged: ${merges.length}, pages merged in all ${merges.reduce((n, m) => n + m.pages, 0)}; largest merges in one group (pages, CPU us): ${merges
        .slice(0, 6)
        .map((m) => `${m.pages}/${m.us}`)
        .join(', ')}`,
    );
  console.log('  longest groups:');
  for (const l of longest) console.log(`    ${l.us} us: segments:pages per level ${l.before} -> ${l.after}`);
  const shape = decodeStructure?.(structure.get() as Buffer);
  if (shape)
    console.log(
      `  segments per level ${shape.levels.map((l) => l.segments).join('/')} (${shape.segments} in all, ${shape.pages} leaf pages)`,
    );
  // Text searches as the store runs them (newest matches first, capped), one or two common words.
  const queries = Array.from({ length: QUERIES }, () =>
    [0, 1]
      .slice(0, 1 + Math.floor(rand() * 2))
      .map(() => VOCABULARY[Math.floor(Math.pow(rand(), 3) * 400)])
      .join(' OR '),
  );
  const q0 = cpu();
  for (const q of queries) nodes.textSearch(q, { nsId: ns.id, liveOnly: true }, 200);
  console.log(
    `  text search CPU per query ${((cpu() - q0) / QUERIES).toFixed(1)} us (${QUERIES} queries of 1-2 common words, 200 newest)`,
  );
  db.close();
} finally {
  fs.rmSync(root, { recursive: true, force: true });
}
