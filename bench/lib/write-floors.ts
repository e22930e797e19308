/**
 * Floors of benchmark (a) (docs/adr/0166): the SQLite work a durable write cannot avoid, measured alone
 * in the same run as the write figures, through the store layer in one transaction on a fresh
 * `knowledge.db` (no HTTP, no admission, no savepoints, no fsync): the version rows of a text node
 * (`kn_nodes`, `kn_versions` with its indexes, `kn_support`, the FTS5 row) and the vec0 insert of one
 * 384-dimension vector. A write path on one thread cannot go faster than 1 s divided by these.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openKnowledgeStore } from '../../store/open-stores.js';
import { NodeStore } from '../../store/knowledge/node-store.js';
import { VectorTables } from '../../store/knowledge/vector-tables.js';
import { OPEN_TIME } from '../../store/knowledge/rows.js';
import { fingerprintOf } from '../../knowledge/write/write-service.js';

/** CPU time of the calling thread in microseconds (Linux: this thread alone; elsewhere the process). */
export function threadCpuMicros(): number {
  try {
    const fields = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000; // utime + stime, in 10 ms ticks
  } catch {
    const c = process.cpuUsage();
    return c.user + c.system;
  }
}

/** Microseconds of CPU per item of `fn` run `n` times in one transaction (process CPU, all threads). */
function cpuPerItem(n: number, fn: (i: number) => void, tx: (run: () => void) => void): number {
  const c0 = process.cpuUsage();
  tx(() => {
    for (let i = 0; i < n; i++) fn(i);
  });
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / n;
}

/** Measures the floors on a fresh store in a temporary folder; answers microseconds of CPU per item. */
export function writeFloors(
  texts: (i: number) => string,
  vector: () => Float32Array,
  n = 5000,
): { textNode: number; vec0: number } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-floors-'));
  const opened = openKnowledgeStore(dir);
  try {
    const nodes = new NodeStore(opened.db);
    const vectors = new VectorTables(opened.db);
    const ns = nodes.createNamespace('default', 'floors', 'general', Date.now());
    const tx = (run: () => void) => nodes.transaction(() => nodes.deferText(run));
    const base = Date.now();
    // Warm the statements and the vec0 table once, outside the measure.
    vectors.insert(1_000_000_000, vector(), meta(ns.id, base));
    const rows = Array.from({ length: n }, (_, i) => ({ content: texts(i), at: base + i }));
    const textNode = cpuPerItem(
      n,
      (i) => {
        const { content, at } = rows[i]!;
        nodes.insertFirstVersion(
          null,
          {
            node_id: `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`,
            ns_id: ns.id,
            content,
            labels: '[]',
            properties: '{}',
            confidence: 0.5,
            utility: 0,
            mem_type: null,
            model_id: null,
            fingerprint: fingerprintOf(content),
            claim_key: null,
            claim_value: null,
            dims: null,
            valid_from: at,
            valid_to: OPEN_TIME,
            tx_from: at,
            tx_to: OPEN_TIME,
            retracted: 0,
            change: 'create',
          },
          ['bench'],
        );
      },
      tx,
    );
    const vecs = Array.from({ length: Math.min(n, 2000) }, vector);
    const vec0 = cpuPerItem(vecs.length, (i) => vectors.insert(i + 1, vecs[i]!, meta(ns.id, base + i)), tx);
    return { textNode, vec0 };
  } finally {
    opened.db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function meta(nsId: number, at: number) {
  return { nsId, validFrom: at, validTo: OPEN_TIME, txFrom: at, txTo: OPEN_TIME, retracted: false };
}
