/**
 * knowledge.db schema migrations. Append only: never edit a released entry, add a new one.
 */
import type { Migration } from '../migrate.js';

export const KNOWLEDGE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'store-metadata',
    sql: `
      CREATE TABLE store_meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'graph-memory',
    // Times are epoch milliseconds; 253402300799999 (9999-12-31T23:59:59.999Z) marks an open interval.
    // Vector tables (vec0, one per dimension) are created on first use: see docs/adr/0021.
    sql: `
      CREATE TABLE kn_namespaces (
        id INTEGER PRIMARY KEY,
        tenant TEXT NOT NULL,
        name TEXT NOT NULL,
        mode TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        UNIQUE (tenant, name)
      );
      CREATE TABLE kn_nodes (
        id TEXT PRIMARY KEY,
        ns_id INTEGER NOT NULL REFERENCES kn_namespaces(id),
        request_id TEXT,
        created_at INTEGER NOT NULL,
        last_version INTEGER NOT NULL
      );
      CREATE UNIQUE INDEX kn_nodes_request ON kn_nodes (ns_id, request_id) WHERE request_id IS NOT NULL;
      CREATE TABLE kn_versions (
        vid INTEGER PRIMARY KEY AUTOINCREMENT,
        node_id TEXT NOT NULL REFERENCES kn_nodes(id),
        ns_id INTEGER NOT NULL,
        version INTEGER NOT NULL,
        content TEXT NOT NULL,
        labels TEXT NOT NULL,
        properties TEXT NOT NULL,
        confidence REAL NOT NULL,
        utility REAL NOT NULL,
        mem_type TEXT,
        model_id TEXT,
        fingerprint TEXT NOT NULL,
        claim_key TEXT,
        claim_value TEXT,
        dims INTEGER,
        valid_from INTEGER NOT NULL,
        valid_to INTEGER NOT NULL,
        tx_from INTEGER NOT NULL,
        tx_to INTEGER NOT NULL,
        retracted INTEGER NOT NULL DEFAULT 0,
        change TEXT NOT NULL,
        UNIQUE (node_id, version)
      );
      CREATE INDEX kn_versions_node ON kn_versions (node_id, tx_to);
      CREATE INDEX kn_versions_fingerprint ON kn_versions (ns_id, fingerprint, tx_to);
      CREATE INDEX kn_versions_claim ON kn_versions (ns_id, claim_key, tx_to) WHERE claim_key IS NOT NULL;
      CREATE INDEX kn_versions_ns_tx ON kn_versions (ns_id, tx_from);
      CREATE TABLE kn_support (
        vid INTEGER NOT NULL REFERENCES kn_versions(vid),
        source_id TEXT NOT NULL,
        PRIMARY KEY (vid, source_id)
      ) WITHOUT ROWID;
      CREATE INDEX kn_support_source ON kn_support (source_id);
      CREATE TABLE kn_sources (
        ns_id INTEGER NOT NULL REFERENCES kn_namespaces(id),
        source_id TEXT NOT NULL,
        credibility REAL NOT NULL,
        labels TEXT NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (ns_id, source_id)
      ) WITHOUT ROWID;
      CREATE TABLE kn_source_trust (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        ns_id INTEGER NOT NULL,
        source_id TEXT NOT NULL,
        node_id TEXT,
        action TEXT NOT NULL,
        credibility REAL NOT NULL,
        previous REAL,
        reason TEXT,
        tx_time INTEGER NOT NULL
      );
      CREATE INDEX kn_source_trust_source ON kn_source_trust (ns_id, source_id, id);
      CREATE TABLE kn_edges (
        id TEXT PRIMARY KEY,
        ns_id INTEGER NOT NULL,
        from_id TEXT NOT NULL REFERENCES kn_nodes(id),
        to_id TEXT NOT NULL REFERENCES kn_nodes(id),
        type TEXT NOT NULL,
        weight REAL NOT NULL,
        tx_from INTEGER NOT NULL,
        tx_to INTEGER NOT NULL
      );
      CREATE INDEX kn_edges_from ON kn_edges (from_id, tx_to);
      CREATE INDEX kn_edges_to ON kn_edges (to_id, tx_to);
      CREATE TABLE kn_intents (
        id TEXT PRIMARY KEY,
        ns_id INTEGER NOT NULL,
        kind TEXT NOT NULL,
        node_id TEXT,
        request_id TEXT,
        payload TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        last_error TEXT
      );
      CREATE INDEX kn_intents_ns ON kn_intents (ns_id, created_at);
      CREATE TABLE kn_vector_tables (
        dims INTEGER PRIMARY KEY,
        created_at INTEGER NOT NULL
      );
      CREATE VIRTUAL TABLE kn_text USING fts5(content, ns_id UNINDEXED, live UNINDEXED, tokenize = 'unicode61 remove_diacritics 2');
    `,
  },
  {
    version: 3,
    name: 'feedback-and-review',
    // Feedback events, per-node feedback counters (the review queue's incremental signal), review
    // decisions, escalation digest snapshots, handoff receipts and review worker runs: docs/adr/0030-0034.
    sql: `
      CREATE TABLE kn_feedback_events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        event_id TEXT NOT NULL UNIQUE,
        ns_id INTEGER NOT NULL,
        node_id TEXT NOT NULL,
        node_version INTEGER NOT NULL,
        action TEXT NOT NULL,
        source_id TEXT NOT NULL,
        source_credibility REAL NOT NULL,
        previous_credibility REAL NOT NULL,
        confidence REAL NOT NULL,
        previous_confidence REAL NOT NULL,
        utility REAL NOT NULL,
        reason TEXT,
        tx_time INTEGER NOT NULL
      );
      CREATE INDEX kn_feedback_events_ns ON kn_feedback_events (ns_id, tx_time, id);
      CREATE INDEX kn_feedback_events_node ON kn_feedback_events (node_id, id);
      CREATE TABLE kn_node_feedback (
        node_id TEXT PRIMARY KEY,
        ns_id INTEGER NOT NULL,
        source_id TEXT NOT NULL,
        validations INTEGER NOT NULL DEFAULT 0,
        refutations INTEGER NOT NULL DEFAULT 0,
        useful INTEGER NOT NULL DEFAULT 0,
        stale INTEGER NOT NULL DEFAULT 0,
        recall_count INTEGER NOT NULL DEFAULT 0,
        last_recalled_at INTEGER,
        first_refuted_at INTEGER,
        last_refuted_at INTEGER,
        first_stale_at INTEGER,
        last_stale_at INTEGER,
        last_action TEXT NOT NULL,
        last_event_at INTEGER NOT NULL,
        flagged INTEGER NOT NULL DEFAULT 0
      ) WITHOUT ROWID;
      CREATE INDEX kn_node_feedback_flagged ON kn_node_feedback (ns_id, flagged) WHERE flagged = 1;
      CREATE INDEX kn_versions_live_confidence ON kn_versions (ns_id, confidence, node_id, tx_from, valid_to, valid_from)
        WHERE tx_to = 253402300799999 AND retracted = 0;
      CREATE INDEX kn_versions_current_valid_to ON kn_versions (ns_id, valid_to) WHERE tx_to = 253402300799999;
      CREATE INDEX kn_versions_current_valid_from ON kn_versions (ns_id, valid_from) WHERE tx_to = 253402300799999;
      CREATE INDEX kn_versions_live_claims ON kn_versions (ns_id, claim_key, claim_value, node_id)
        WHERE claim_key IS NOT NULL AND tx_to = 253402300799999 AND retracted = 0;
      CREATE TABLE kn_review_decisions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        ns_id INTEGER NOT NULL,
        review_id TEXT NOT NULL,
        status TEXT NOT NULL,
        owner TEXT,
        decision TEXT,
        note TEXT,
        recheck_at INTEGER,
        actor TEXT,
        tx_time INTEGER NOT NULL
      );
      CREATE INDEX kn_review_decisions_item ON kn_review_decisions (ns_id, review_id, id);
      CREATE TABLE kn_review_digests (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        event_id TEXT NOT NULL UNIQUE,
        ns_id INTEGER NOT NULL,
        kind TEXT NOT NULL,
        owner TEXT,
        escalation_level TEXT,
        escalation_after_hours REAL NOT NULL,
        note TEXT,
        digest TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX kn_review_digests_ns ON kn_review_digests (ns_id, id);
      CREATE TABLE kn_handoff_receipts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        ns_id INTEGER NOT NULL,
        digest_event_id TEXT NOT NULL,
        target_url TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        success INTEGER NOT NULL,
        status_code INTEGER,
        payload_sha256 TEXT NOT NULL,
        response_sha256 TEXT,
        error TEXT,
        duration_ms INTEGER NOT NULL,
        tx_time INTEGER NOT NULL
      );
      CREATE INDEX kn_handoff_receipts_ns ON kn_handoff_receipts (ns_id, id);
      CREATE INDEX kn_handoff_receipts_target ON kn_handoff_receipts (ns_id, digest_event_id, target_url, id);
      CREATE TABLE kn_review_worker_runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL UNIQUE,
        ns_id INTEGER NOT NULL,
        execute INTEGER NOT NULL,
        evaluator TEXT NOT NULL,
        item_limit INTEGER NOT NULL,
        allowed_actions TEXT NOT NULL,
        status TEXT NOT NULL,
        summary TEXT NOT NULL,
        started_at INTEGER NOT NULL,
        finished_at INTEGER
      );
      CREATE INDEX kn_review_worker_runs_ns ON kn_review_worker_runs (ns_id, id);
    `,
  },
  {
    version: 4,
    name: 'knowledge-acquisition',
    // Append-only connector receipts and acquired evidence staged outside the graph until admitted
    // or rejected (a candidate row is decided once): docs/adr/0035.
    sql: `
      CREATE TABLE kn_acquisition_receipts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        receipt_id TEXT NOT NULL UNIQUE,
        ns_id INTEGER NOT NULL,
        task_id TEXT NOT NULL,
        task_type TEXT NOT NULL,
        idempotency_key TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        connector_url TEXT NOT NULL,
        outcome TEXT NOT NULL,
        retry_class TEXT NOT NULL,
        status_code INTEGER,
        error TEXT,
        evidence_count INTEGER NOT NULL,
        review_before_admission INTEGER NOT NULL,
        request_sha256 TEXT NOT NULL,
        response_sha256 TEXT,
        duration_ms INTEGER NOT NULL,
        tx_time INTEGER NOT NULL
      );
      CREATE INDEX kn_acquisition_receipts_ns ON kn_acquisition_receipts (ns_id, id);
      CREATE INDEX kn_acquisition_receipts_key ON kn_acquisition_receipts (ns_id, idempotency_key, connector_url, id);
      CREATE TABLE kn_acquisition_candidates (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        candidate_id TEXT NOT NULL UNIQUE,
        ns_id INTEGER NOT NULL,
        task_id TEXT NOT NULL,
        task_type TEXT NOT NULL,
        receipt_id TEXT NOT NULL,
        idempotency_key TEXT NOT NULL,
        review_required INTEGER NOT NULL,
        content TEXT NOT NULL,
        source_id TEXT NOT NULL,
        labels TEXT NOT NULL,
        properties TEXT NOT NULL,
        confidence REAL,
        evidence_url TEXT,
        status TEXT NOT NULL,
        node_id TEXT,
        actor TEXT,
        note TEXT,
        decided_at INTEGER,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX kn_acquisition_candidates_ns ON kn_acquisition_candidates (ns_id, status, id);
      CREATE INDEX kn_acquisition_candidates_task ON kn_acquisition_candidates (ns_id, idempotency_key, id);
    `,
  },
  {
    version: 5,
    name: 'text-index-porter',
    // The text index stems with the Porter algorithm so that "adopted" finds "adopting"; the query
    // side stems the same way (domain/knowledge/retrieval/text-analysis.ts). Rebuilt from the versions, with the
    // same live rule as NodeStore.insertVersion: docs/adr/0023-lexical-retrieval.md.
    sql: `
      DROP TABLE kn_text;
      CREATE VIRTUAL TABLE kn_text USING fts5(content, ns_id UNINDEXED, live UNINDEXED, tokenize = 'porter unicode61 remove_diacritics 2');
      INSERT INTO kn_text (rowid, content, ns_id, live)
        SELECT vid, content, ns_id, CASE WHEN tx_to = 253402300799999 AND retracted = 0 THEN 1 ELSE 0 END FROM kn_versions;
      CREATE VIRTUAL TABLE kn_text_vocab USING fts5vocab(kn_text, row);
    `,
  },
  {
    version: 6,
    name: 'ranking-eval-snapshots',
    // Stored ranking evaluation runs, listed and compared over time: docs/adr/0177. Store-wide (no
    // namespace): the evaluation runs on its own corpus, never on a tenant's data.
    sql: `
      CREATE TABLE kn_eval_runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL UNIQUE,
        created_at INTEGER NOT NULL,
        svc_version TEXT NOT NULL,
        top_k INTEGER NOT NULL,
        label TEXT,
        summary TEXT NOT NULL,
        report TEXT NOT NULL
      );
      CREATE INDEX kn_eval_runs_created ON kn_eval_runs (created_at, id);
    `,
  },
  {
    version: 7,
    name: 'versions-node-index-overlap',
    // kn_versions_node (node_id, tx_to) repeats the node_id prefix of the UNIQUE (node_id, version)
    // index, which serves every lookup by node (a node has a handful of versions): one random-key
    // B-tree less per written version. No statement names it (INDEXED BY), so an older release still
    // runs on this schema (docs/adr/0089): docs/adr/0202.
    sql: `
      DROP INDEX kn_versions_node;
    `,
  },
  {
    version: 8,
    name: 'text-index-merge-in-slices',
    // FTS5's automerge merges kn_text's segments in lumps of 64 x (levels) pages inside whichever
    // COMMIT crosses its 64-page mark (~20 ms of the event loop); the store now merges in slices the
    // size of each transaction's writes (store/knowledge/text-merge.ts, docs/adr/0207). The setting is
    // kept in kn_text_config. An older release on this schema finds the same rows in the same order and
    // merges at FTS5's crisis threshold (16 segments a level) instead: docs/adr/0089, docs/adr/0207.
    sql: `
      INSERT INTO kn_text (kn_text, rank) VALUES ('automerge', 0);
    `,
  },
];
