/**
 * Review queue benchmark (prints, does not assert): `node --import tsx bench/review.ts [--nodes N] [--feedback F] [--queries Q]`.
 *
 * Loads N nodes (default 100,000) through the store layer in one transaction (confidence spread
 * over [0.25, 1], 5% structured claims with competing values, 200 sources), then applies F
 * feedback events (default 10,000) through the real feedback service (durability relaxed to
 * synchronous=OFF for the load only) and 500 decisions, and measures review queue derivation:
 * cold (a fresh service, nothing cached), after a change (one feedback event, then derive), warm
 * (repeated reads), and over HTTP.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startKnowledgeStore } from '../wiring/knowledge-store.js';
import { loadConfig } from '../platform/config.js';
import { silentLogger } from '../platform/logger.js';
import { openKnowledgeStore } from '../store/open-stores.js';
import { NodeStore } from '../store/knowledge/node-store.js';
import { OPEN_TIME } from '../store/knowledge/rows.js';
import { claimOf, fingerprintOf } from '../knowledge/write/write-service.js';
import { ReviewService } from '../knowledge/review/review-service.js';
import type { FeedbackAction } from '../domain/knowledge/feedback-rules.js';
import { positiveIntArg, seededRandom } from './lib/bench-args.js';

const NODES = positiveIntArg('nodes', 100_000);
const FEEDBACK = positiveIntArg('feedback', 10_000);
const QUERIES = positiveIntArg('queries', 200);

const rand = seededRandom(7);
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
const fmt = (ms: number) => `${ms.toFixed(ms < 10 ? 2 : 1)} ms`;
const line = (label: string, ms: number[]) =>
  console.log(
    `    ${label.padEnd(58)} p50 ${fmt(percentile(ms, 50))}, p99 ${fmt(percentile(ms, 99))}, max ${fmt(Math.max(...ms))}`,
  );

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-review-'));
const dataDir = path.join(root, 'data');
console.log(
  `review bench: ${NODES} nodes, ${FEEDBACK} feedback events, ${QUERIES} queries; node ${process.version}, ${os.cpus().length} CPUs, load ${os.loadavg()[0]!.toFixed(1)}`,
);

const ids: string[] = [];
{
  const opened = openKnowledgeStore(dataDir);
  const nodes = new NodeStore(opened.db);
  const ns = nodes.createNamespace('default', 'bench', 'general', Date.now());
  const t0 = performance.now();
  const base = Date.now() - NODES - 3_600_000;
  nodes.transaction(() => {
    for (let i = 0; i < NODES; i++) {
      const id = `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
      ids.push(id);
      const tx = base + i;
      nodes.createNode(id, ns.id, null, tx);
      const claimed = i % 20 === 0;
      const properties = claimed
        ? { subject: `entity${i % 1000}`, predicate: 'status', object: rand() < 0.5 ? 'up' : 'down' }
        : {};
      const content = claimed
        ? `entity${i % 1000} is ${properties.object} (${i})`
        : `note ${i} about topic ${Math.floor(rand() * 1000)}`;
      const claim = claimOf(properties, content);
      nodes.insertVersion(
        {
          node_id: id,
          ns_id: ns.id,
          content,
          labels: '[]',
          properties: JSON.stringify(properties),
          confidence: Math.round((0.25 + 0.75 * rand()) * 1000) / 1000,
          utility: 0,
          mem_type: null,
          model_id: null,
          fingerprint: fingerprintOf(content),
          claim_key: claim?.key ?? null,
          claim_value: claim?.value ?? null,
          dims: null,
          valid_from: tx,
          valid_to: OPEN_TIME,
          tx_from: tx,
          tx_to: OPEN_TIME,
          retracted: 0,
          change: 'create',
        },
        [`source${i % 200}`],
      );
    }
  });
  console.log(
    `    bulk load of ${NODES} nodes (store layer, one transaction): ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  opened.db.close();
}

const store = await startKnowledgeStore(
  loadConfig({
    SVC_DATA_DIR: dataDir,
    SVC_KNOWLEDGE_PORT: '0',
    SVC_KNOWLEDGE_ADMIN_PORT: '0',
    SVC_LOG_LEVEL: 'silent',
  }),
  silentLogger(),
);
try {
  const { core, feedback, review } = store.services;
  core.db.pragma('synchronous = OFF');
  const actions: FeedbackAction[] = [
    'refute',
    'refute',
    'refute',
    'stale',
    'stale',
    'validate',
    'validate',
    'validate',
    'useful',
    'useful',
  ];
  let t0 = performance.now();
  for (let i = 0; i < FEEDBACK; i++) {
    // Feedback concentrates on a minority of nodes (power law), as real usage does.
    const target = ids[Math.floor(Math.pow(rand(), 2) * ids.length)]!;
    await feedback.record('default', 'bench', target, actions[i % actions.length]!);
  }
  console.log(
    `    ${FEEDBACK} feedback events through the feedback service (synchronous=OFF for the load): ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  for (let i = 0; i < 500; i++) {
    review.decide('default', 'bench', {
      review_id: `low_confidence:${ids[Math.floor(rand() * ids.length)]}`,
      status: 'assigned',
      owner: `owner${i % 7}`,
    });
  }
  core.db.pragma('synchronous = FULL');
  const ns = core.namespace('default', 'bench');
  const first = review.queue('default', 'bench', {}, {}, 100);
  const counts = new Map<string, number>();
  for (const item of review.items(ns, ReviewService.thresholds(), core.now()))
    counts.set(item.type, (counts.get(item.type) ?? 0) + 1);
  console.log(
    `    queue: ${first.total} items matching the default filters; by type ${JSON.stringify(Object.fromEntries(counts))}; ${core.feedback.count(ns.id)} feedback events`,
  );

  const cold: number[] = [];
  for (let i = 0; i < Math.min(QUERIES, 100); i++) {
    const fresh = new ReviewService(core);
    t0 = performance.now();
    fresh.queue('default', 'bench', {}, {}, 100);
    cold.push(performance.now() - t0);
  }
  const afterChange: number[] = [];
  for (let i = 0; i < Math.min(QUERIES, 50); i++) {
    await feedback.record('default', 'bench', ids[Math.floor(rand() * ids.length)]!, 'stale');
    t0 = performance.now();
    review.queue('default', 'bench', {}, {}, 100);
    afterChange.push(performance.now() - t0);
  }
  const warm: number[] = [];
  const filtered: number[] = [];
  for (let i = 0; i < QUERIES; i++) {
    t0 = performance.now();
    review.queue('default', 'bench', {}, {}, 100);
    warm.push(performance.now() - t0);
    t0 = performance.now();
    review.queue(
      'default',
      'bench',
      {},
      { types: ['refuted', 'stale'], owner: 'unassigned', status: 'open', sourceId: 'source7' },
      50,
    );
    filtered.push(performance.now() - t0);
  }
  const http: number[] = [];
  for (let i = 0; i < QUERIES; i++) {
    t0 = performance.now();
    const res = await fetch(`${store.url}/v1/namespaces/bench/review/queue?limit=100`);
    await res.json();
    http.push(performance.now() - t0);
  }
  const digest: number[] = [];
  for (let i = 0; i < Math.min(QUERIES, 50); i++) {
    t0 = performance.now();
    store.services.escalations.digest('default', 'bench', {});
    digest.push(performance.now() - t0);
  }
  console.log('review queue derivation (top 100 items of the default view):');
  line('cold: fresh service, nothing cached (in process)', cold);
  line('after a change: one feedback event, then derive (in process)', afterChange);
  line('warm: no change since the last read (in process)', warm);
  line('warm, four additive filters, limit 50 (in process)', filtered);
  line('HTTP GET /review/queue?limit=100 (warm)', http);
  line('escalation digest over every item (warm, in process)', digest);
} finally {
  await store.close();
  fs.rmSync(root, { recursive: true, force: true });
}
