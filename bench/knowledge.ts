/**
 * Knowledge store benchmark (not a test): `node --import tsx bench/knowledge.ts [--nodes N] [--queries Q] [--writes W]`.
 *
 * (a) durable write throughput through the write service, over HTTP (1 and 8 clients, with and without
 *     384-dim vectors) and through the batch route, and retrieve latency while writes run (`--writes-only`: (a) alone);
 *     `--stalls` adds the longest event-loop stalls of the busy retrieve probe with what ran in them (docs/adr/0205);
 * (b) vector retrieve latency through the HTTP API beside sqlite-vec's exact float KNN on the same
 *     data in the same run, with recall@10 against that exact search;
 * (c) text retrieve latency beside a naive scan of the same live rows.
 * `--reads-only` skips (a): (b) and (c) alone, on the same corpus whatever the code under test.
 * The large corpus is bulk-loaded through the store layer in one transaction, then served by the
 * real server (which rebuilds its vector index from the vec0 table at start, also timed).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startKnowledgeStore } from '../wiring/knowledge-store.js';
import { loadConfig } from '../platform/config.js';
import { silentLogger } from '../platform/logger.js';
import { openKnowledgeStore } from '../store/open-stores.js';
import { NodeStore } from '../store/knowledge/node-store.js';
import { VectorTables } from '../store/knowledge/vector-tables.js';
import { OPEN_TIME } from '../store/knowledge/rows.js';
import { fingerprintOf } from '../knowledge/write/write-service.js';
import {
  parseLexicalQuery,
  rankingStems,
  satisfiesLiterals,
  termCoverage,
} from '../domain/knowledge/retrieval/lexical-query.js';
import { analyze } from '../domain/knowledge/retrieval/text-analysis.js';
import { positiveIntArg, seededRandom } from './lib/bench-args.js';
import { writeThroughput } from './lib/write-throughput.js';
import { writeFloors } from './lib/write-floors.js';
import { ThreadCpuMeter } from './lib/thread-cpu.js';

const DIMS = 384;
const NODES = positiveIntArg('nodes', 100_000);
const QUERIES = positiveIntArg('queries', 200);
const WRITES = positiveIntArg('writes', 2000);

// Deterministic generator (mulberry32) and Gaussian samples.
const rand = seededRandom(42);
function gauss(): number {
  return Math.sqrt(-2 * Math.log(rand() + 1e-12)) * Math.cos(2 * Math.PI * rand());
}

// Embedding-like data: points around 1,000 topic centroids (real embeddings cluster by topic).
const CENTROIDS = Array.from({ length: 1000 }, () => Float32Array.from({ length: DIMS }, gauss));
function sampleVector(): { vector: Float32Array; topic: number } {
  const topic = Math.floor(rand() * CENTROIDS.length);
  const c = CENTROIDS[topic]!;
  return { vector: Float32Array.from({ length: DIMS }, (_, i) => c[i]! + 0.8 * gauss()), topic };
}
const VOCABULARY = Array.from({ length: 5000 }, (_, i) =>
  `w${i.toString(36)}x`.replace(/\d/g, (d) => 'abcdefghij'[Number(d)]!),
);
function sampleText(i: number, topic: number): string {
  const words: string[] = [];
  for (let k = 0; k < 12; k++) {
    // Zipf-like: low word indexes are common.
    const r = Math.floor(Math.pow(rand(), 3) * VOCABULARY.length);
    words.push(VOCABULARY[r]!);
  }
  words.push(`topic${topic}`);
  if (i % 10 === 0) words.push(`ERR-${i}`);
  return words.join(' ');
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
function fmt(ms: number): string {
  return `${ms.toFixed(ms < 10 ? 2 : 1)} ms`;
}
async function post(url: string, body: unknown, retry = true): Promise<any> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  } catch (error) {
    // A keep-alive socket the server closed while the benchmark was busy elsewhere: reconnect once.
    if (retry) return post(url, body, false);
    throw error;
  }
  const json = await res.json();
  if (!res.ok) throw new Error(`${url} answered ${res.status}: ${JSON.stringify(json)}`);
  return json;
}

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'));
const config = (dir: string) =>
  loadConfig({ SVC_DATA_DIR: dir, SVC_KNOWLEDGE_PORT: '0', SVC_KNOWLEDGE_ADMIN_PORT: '0', SVC_LOG_LEVEL: 'silent' });
console.log(
  `knowledge bench: ${NODES} nodes, ${DIMS} dims, ${QUERIES} queries, ${WRITES} writes; node ${process.version}, ${os.cpus().length} CPUs`,
);

try {
  // (a) write throughput through the real write path (group commit, synchronous=FULL durability).
  if (!process.argv.includes('--reads-only')) {
    // Before the store: the meter tells the checkpoint worker (started later) from V8's threads.
    const threads = await ThreadCpuMeter.start();
    const store = await startKnowledgeStore(config(path.join(root, 'writes')), silentLogger());
    // Times each retrieve service call (wall time from call to answer), for (a)'s probe.
    const retrieveMs: number[] = [];
    const retrieval = store.services.retrieval;
    const retrieve = retrieval.retrieve.bind(retrieval);
    retrieval.retrieve = async (...args: Parameters<typeof retrieve>) => {
      const s = performance.now();
      try {
        return await retrieve(...args);
      } finally {
        retrieveMs.push(performance.now() - s);
      }
    };
    const payloads = Array.from({ length: 500 }, (_, i) => {
      const s = sampleVector();
      return { content: sampleText(i, s.topic), source_id: 'bench', vector: Array.from(s.vector) };
    });
    let t0 = performance.now();
    for (const payload of payloads) await store.services.writes.write('default', 'w', payload);
    const serviceRate = payloads.length / ((performance.now() - t0) / 1000);
    console.log(`(a) write service in process, one awaited write at a time: ${serviceRate.toFixed(0)} nodes/s`);
    t0 = performance.now();
    await Promise.all(payloads.map((p) => store.services.writes.write('default', 'w2', p)));
    console.log(
      `    write service in process, 500 writes at once: ${(500 / ((performance.now() - t0) / 1000)).toFixed(0)} nodes/s`,
    );
    await writeThroughput(
      store.url,
      WRITES,
      (i, vector) => {
        const s = sampleVector();
        const content = sampleText(i, s.topic);
        return vector ? { content, source_id: 'bench', vector: Array.from(s.vector) } : { content, source_id: 'bench' };
      },
      () => Array.from(sampleVector().vector),
      () => store.services.core.commits.stats(),
      () => retrieveMs.splice(0),
      threads,
    );
    await store.close();
    const floors = writeFloors(
      (i) => sampleText(i, sampleVector().topic),
      () => sampleVector().vector,
    );
    console.log(
      `    floors in this run (store layer, one transaction, no HTTP, no fsync; docs/adr/0166): text node rows ${Math.round(floors.textNode)} us CPU (<= ${Math.round(1e6 / floors.textNode).toLocaleString('en-US')}/s on one thread); vec0 insert of a 384-dim vector ${Math.round(floors.vec0)} us (<= ${Math.round(1e6 / (floors.textNode + floors.vec0)).toLocaleString('en-US')} vector + text nodes/s)`,
    );
  }
  if (process.argv.includes('--writes-only')) {
    fs.rmSync(root, { recursive: true, force: true });
    process.exit(0);
  }

  // Bulk load of the large corpus through the store layer, in one transaction.
  const dataDir = path.join(root, 'big');
  const queryVectors: Float32Array[] = [];
  {
    const opened = openKnowledgeStore(dataDir);
    const nodes = new NodeStore(opened.db);
    const vectors = new VectorTables(opened.db);
    const ns = nodes.createNamespace('default', 'bench', 'general', Date.now());
    const t0 = performance.now();
    const base = Date.now() - NODES;
    nodes.transaction(() => {
      for (let i = 0; i < NODES; i++) {
        const s = sampleVector();
        const id = `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
        const tx = base + i;
        nodes.createNode(id, ns.id, null, tx);
        const content = sampleText(i, s.topic);
        const row = nodes.insertVersion(
          {
            node_id: id,
            ns_id: ns.id,
            content,
            labels: '[]',
            properties: '{}',
            confidence: 0.5,
            utility: 0,
            mem_type: null,
            model_id: 'bench',
            fingerprint: fingerprintOf(content),
            claim_key: null,
            claim_value: null,
            dims: DIMS,
            valid_from: tx,
            valid_to: OPEN_TIME,
            tx_from: tx,
            tx_to: OPEN_TIME,
            retracted: 0,
            change: 'create',
          },
          ['bench'],
        );
        vectors.insert(row.vid, s.vector, {
          nsId: ns.id,
          validFrom: tx,
          validTo: OPEN_TIME,
          txFrom: tx,
          txTo: OPEN_TIME,
          retracted: false,
        });
      }
    });
    console.log(
      `    bulk load of ${NODES} nodes (store layer, one transaction): ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    opened.db.close();
    for (let q = 0; q < QUERIES; q++) queryVectors.push(sampleVector().vector);
  }

  const t0 = performance.now();
  const store = await startKnowledgeStore(config(dataDir), silentLogger());
  console.log(`    server start with vector index rebuild: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const core = store.services.core;
  const ns = core.namespace('default', 'bench');
  const now = core.now();
  const filter = { nsId: ns.id, validAt: now, knownAt: now, includeRetracted: false };

  // (b) vector retrieval.
  {
    const plainMs: number[] = [];
    for (const q of queryVectors) {
      const s = performance.now();
      core.vectors.knnPlain(q, 10);
      plainMs.push(performance.now() - s);
    }
    const exactMs: number[] = [];
    const exactTop: number[][] = [];
    for (const q of queryVectors) {
      const s = performance.now();
      exactTop.push(core.vectors.knn(q, 10, filter).map((r) => r.vid));
      exactMs.push(performance.now() - s);
    }
    const httpMs: number[] = [];
    let recall = 0;
    const url = `${store.url}/v1/namespaces/bench/retrieve`;
    for (let i = 0; i < 20; i++) await post(url, { vector: Array.from(queryVectors[i]!), top_k: 10 });
    const vidOf = (id: string) => Number.parseInt(id.slice(24), 16) + 1;
    for (const [i, q] of queryVectors.entries()) {
      const body = {
        vector: Array.from(q),
        top_k: 10,
        score_params: { similarity_weight: 1, confidence_weight: 0, recency_weight: 0, utility_weight: 0 },
      };
      const s = performance.now();
      const res = await post(url, body);
      httpMs.push(performance.now() - s);
      const got = new Set((res.results as { id: string }[]).map((r) => vidOf(r.id)));
      recall += exactTop[i]!.filter((v) => got.has(v)).length / 10;
    }
    const serviceMs: number[] = [];
    for (const q of queryVectors) {
      const s = performance.now();
      await store.services.retrieval.retrieve('default', 'bench', { vector: Array.from(q), top_k: 10 });
      serviceMs.push(performance.now() - s);
    }
    const p50 = percentile(httpMs, 50);
    const base50 = percentile(plainMs, 50);
    console.log(`(b) vector retrieve, ${NODES} nodes x ${DIMS} dims, top 10:`);
    console.log(
      `    sqlite-vec plain float brute-force KNN (in process):          p50 ${fmt(base50)}, p99 ${fmt(percentile(plainMs, 99))}`,
    );
    console.log(
      `    sqlite-vec float KNN with namespace/time/retraction filters:  p50 ${fmt(percentile(exactMs, 50))}, p99 ${fmt(percentile(exactMs, 99))}`,
    );
    console.log(
      `    retrieve service, in process (binary prefilter + rescoring):  p50 ${fmt(percentile(serviceMs, 50))}, p99 ${fmt(percentile(serviceMs, 99))}`,
    );
    console.log(
      `    HTTP /retrieve (binary prefilter + exact rescoring):          p50 ${fmt(p50)}, p99 ${fmt(percentile(httpMs, 99))}`,
    );
    console.log(
      `    speed-up at p50 vs plain KNN: ${(base50 / p50).toFixed(1)}x; recall@10 vs exact filtered KNN: ${(recall / queryVectors.length).toFixed(3)}`,
    );
  }

  // (c) text retrieval.
  {
    const queries: string[] = [];
    for (let i = 0; i < QUERIES; i++) {
      const kind = i % 4;
      if (kind === 0) queries.push(`ERR-${Math.floor(rand() * (NODES / 10)) * 10}`);
      else if (kind === 1) queries.push(`${VOCABULARY[Math.floor(rand() * 200)]} topic${Math.floor(rand() * 1000)}`);
      else if (kind === 2)
        queries.push(
          `${VOCABULARY[Math.floor(rand() * VOCABULARY.length)]} ${VOCABULARY[Math.floor(rand() * VOCABULARY.length)]}`,
        );
      else queries.push(`${VOCABULARY[0]} ${VOCABULARY[1]}`);
    }
    const naive = (text: string) => {
      const q = parseLexicalQuery(text);
      const wanted = new Set(rankingStems(q));
      const hits: { id: string; s: number }[] = [];
      for (const row of core.nodes.scanLive(ns.id)) {
        if (!satisfiesLiterals(row.content, q.literals)) continue;
        if (!analyze(row.content).some((tok) => wanted.has(tok))) continue;
        hits.push({ id: row.node_id, s: termCoverage(row.content, q) });
      }
      return hits.sort((a, b) => b.s - a.s).slice(0, 10);
    };
    const naiveMs: number[] = [];
    for (const q of queries.slice(0, Math.min(40, queries.length))) {
      const s = performance.now();
      naive(q);
      naiveMs.push(performance.now() - s);
    }
    const serviceMs: number[] = [];
    for (const q of queries) {
      const s = performance.now();
      await store.services.retrieval.retrieve('default', 'bench', { text: q, top_k: 10 });
      serviceMs.push(performance.now() - s);
    }
    const httpMs: number[] = [];
    for (const q of queries) {
      const s = performance.now();
      await post(`${store.url}/v1/namespaces/bench/retrieve`, { text: q, top_k: 10 });
      httpMs.push(performance.now() - s);
    }
    const n50 = percentile(naiveMs, 50);
    console.log(`(c) text retrieve, ${NODES} nodes (identifiers, rare, mixed and common-term queries):`);
    console.log(`    naive scan of live rows (in process):  p50 ${fmt(n50)}, p99 ${fmt(percentile(naiveMs, 99))}`);
    console.log(
      `    text retrieve, service (in process):   p50 ${fmt(percentile(serviceMs, 50))}, p99 ${fmt(percentile(serviceMs, 99))}  -> ${(n50 / percentile(serviceMs, 50)).toFixed(0)}x faster at p50`,
    );
    console.log(
      `    text retrieve, HTTP:                   p50 ${fmt(percentile(httpMs, 50))}, p99 ${fmt(percentile(httpMs, 99))}  -> ${(n50 / percentile(httpMs, 50)).toFixed(0)}x faster at p50`,
    );
  }
  await store.close();
} finally {
  fs.rmSync(root, { recursive: true, force: true });
}
