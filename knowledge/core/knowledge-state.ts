/**
 * The shared state every knowledge service works on: the stores of `knowledge.db`, the in-memory
 * vector index, the transaction clock, the optional embedder and reranker, and namespace lookup.
 */
import { v7 as uuidv7 } from 'uuid';
import { NotFoundError, ValidationError, ConflictError } from '../../domain/errors.js';
import { NAMESPACE_MODES, type NamespaceMode } from '../../domain/knowledge/modes.js';
import type { Db } from '../../store/database.js';
import { NodeStore } from '../../store/knowledge/node-store.js';
import { ViewStore } from '../../store/knowledge/view-store.js';
import { SourceStore } from '../../store/knowledge/source-store.js';
import { EdgeStore } from '../../store/knowledge/edge-store.js';
import { IntentStore } from '../../store/knowledge/intent-store.js';
import { VectorTables } from '../../store/knowledge/vector-tables.js';
import { FeedbackStore } from '../../store/knowledge/feedback-store.js';
import { ReviewStore } from '../../store/knowledge/review-store.js';
import { HandoffStore } from '../../store/knowledge/handoff-store.js';
import type { NamespaceRow } from '../../store/knowledge/rows.js';
import { VectorIndex } from '../retrieve/vector-index.js';
import type { Embedder, Reranker } from '../../domain/knowledge/model-ports.js';
import type { Thesaurus } from '../../domain/knowledge/retrieval/thesaurus.js';
import { NO_TELEMETRY, type KnowledgeTelemetry } from '../../domain/knowledge/knowledge-telemetry.js';
import { GroupCommit } from './group-commit.js';

/** Options of {@link KnowledgeState}. */
export interface KnowledgeStateOptions {
  /** Deduplicate writes by content fingerprint unless they say `skip_dedup`. @default false */
  readonly dedupDefault?: boolean;
  readonly embedder?: Embedder;
  readonly reranker?: Reranker;
  /** Thesaurus of lexical query expansion; without one, text queries match their own words only. */
  readonly thesaurus?: Thesaurus;
  /** Wall clock in epoch milliseconds. @default Date.now */
  readonly now?: () => number;
  /** Where admission rejections and webhook deliveries are counted. @default nothing is counted */
  readonly telemetry?: KnowledgeTelemetry;
}

/** A namespace as services see it. */
export interface Namespace {
  readonly id: number;
  readonly tenant: string;
  readonly name: string;
  readonly mode: NamespaceMode;
}

const NAMESPACE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Stores, index and collaborators of one knowledge store. */
export class KnowledgeState {
  readonly db: Db;
  readonly nodes: NodeStore;
  /** Counts, samples and neighbours over the rows one retrieval may see. */
  readonly views: ViewStore;
  readonly sources: SourceStore;
  readonly edges: EdgeStore;
  readonly intents: IntentStore;
  readonly vectors: VectorTables;
  readonly feedback: FeedbackStore;
  readonly review: ReviewStore;
  readonly handoffs: HandoffStore;
  readonly index = new VectorIndex();
  /** Group commit of node writes: one transaction and one fsync for the writes queued together. */
  readonly commits: GroupCommit;
  readonly dedupDefault: boolean;
  readonly embedder: Embedder | undefined;
  readonly reranker: Reranker | undefined;
  readonly thesaurus: Thesaurus | undefined;
  readonly telemetry: KnowledgeTelemetry;
  readonly #wall: () => number;
  #lastTx = 0;

  constructor(db: Db, options: KnowledgeStateOptions = {}) {
    this.db = db;
    this.nodes = new NodeStore(db);
    this.views = new ViewStore(db);
    this.sources = new SourceStore(db);
    this.edges = new EdgeStore(db);
    this.intents = new IntentStore(db);
    this.vectors = new VectorTables(db);
    this.feedback = new FeedbackStore(db);
    this.review = new ReviewStore(db);
    this.handoffs = new HandoffStore(db);
    this.commits = new GroupCommit(
      db,
      (fn) => this.nodes.deferText(fn),
      () => this.nodes.textMerge.pending,
    );
    this.dedupDefault = options.dedupDefault ?? false;
    this.embedder = options.embedder;
    this.reranker = options.reranker;
    this.thesaurus = options.thesaurus;
    this.telemetry = options.telemetry ?? NO_TELEMETRY;
    this.#wall = options.now ?? Date.now;
    for (const dims of this.vectors.dimensions()) this.index.load(this.vectors.all(dims));
    const last = db.prepare('SELECT max(tx_from) AS t FROM kn_versions').get() as { t: number | null };
    this.#lastTx = last.t ?? 0;
  }

  /**
   * Now, epoch milliseconds: the wall clock, but never before the last transaction time (bursts of
   * writes can run the transaction clock a few milliseconds ahead, and reads must see them).
   */
  now(): number {
    return Math.max(this.#wall(), this.#lastTx);
  }

  /** A transaction time strictly after every earlier one, so versions order by tx_from. */
  nextTx(): number {
    const t = Math.max(this.#wall(), this.#lastTx + 1);
    this.#lastTx = t;
    return t;
  }

  /**
   * Rebuilds what is derived in memory from `knowledge.db` after its rows changed underneath the
   * services (a restore): the vector index and the transaction clock.
   */
  reloadDerived(): void {
    this.index.clear();
    for (const dims of this.vectors.dimensions()) this.index.load(this.vectors.all(dims));
    const last = this.db.prepare('SELECT max(tx_from) AS t FROM kn_versions').get() as { t: number | null };
    this.#lastTx = Math.max(this.#lastTx, last.t ?? 0);
  }

  /**
   * A new id: a UUIDv7 (RFC 9562), whose leading 48 bits are the creation time in milliseconds and
   * the rest random (monotonic within a millisecond). Ids made one after another sort one after
   * another, so the B-trees keyed by node id (`kn_nodes`, `kn_versions (node_id, version)`) grow at
   * their right edge instead of touching a random leaf per write: docs/adr/0202.
   */
  newId(): string {
    return uuidv7();
  }

  /** Checks a namespace name from a URL. */
  static checkName(name: string): void {
    if (!NAMESPACE_NAME.test(name)) {
      throw new ValidationError(
        `namespace "${name.slice(0, 140)}" must be 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit`,
        { code: 'invalid_namespace' },
      );
    }
  }

  /** Every namespace of every tenant (for start-up work such as warming indexes). */
  allNamespaces(): Namespace[] {
    return this.nodes.allNamespaces().map(toNamespace);
  }

  /** The tenant's namespace, or a 404. */
  namespace(tenant: string, name: string): Namespace {
    KnowledgeState.checkName(name);
    const row = this.nodes.namespace(tenant, name);
    if (!row) throw new NotFoundError(`namespace "${name}" does not exist`, { code: 'namespace_not_found' });
    return toNamespace(row);
  }

  /** The node `nodeId` (any letter case) of namespace `ns`, or a 404 `node_not_found` naming the id as given. */
  nodeIn(ns: Namespace, nodeId: string) {
    const id = nodeId.toLowerCase();
    const node = /^[0-9a-f-]{36}$/.test(id) ? this.nodes.node(id) : undefined;
    if (!node || node.ns_id !== ns.id)
      throw new NotFoundError(`node ${nodeId} does not exist in namespace "${ns.name}"`, { code: 'node_not_found' });
    return node;
  }

  /** The mode of the tenant's namespace; undefined when it does not exist or the name is not valid. */
  modeOf(tenant: string, name: string): NamespaceMode | undefined {
    if (!NAMESPACE_NAME.test(name)) return undefined;
    const row = this.nodes.namespace(tenant, name);
    return row === undefined ? undefined : toNamespace(row).mode;
  }

  /** The tenant's namespace, created with `mode` (default general) when missing; a different mode is a 409. */
  namespaceForWrite(tenant: string, name: string, mode: NamespaceMode | undefined): Namespace {
    KnowledgeState.checkName(name);
    let row = this.nodes.namespace(tenant, name);
    if (!row) {
      row = this.nodes.transaction(
        () =>
          this.nodes.namespace(tenant, name) ?? this.nodes.createNamespace(tenant, name, mode ?? 'general', this.now()),
      );
    }
    const ns = toNamespace(row);
    if (mode !== undefined && mode !== ns.mode) {
      throw new ConflictError(`namespace "${name}" has mode ${ns.mode}; a write cannot change it to ${mode}`, {
        code: 'namespace_mode_mismatch',
        details: { mode: ns.mode },
      });
    }
    return ns;
  }

  /** Effective credibility of a source in a namespace (unlabelled sources get the default). */
  credibility(nsId: number, sourceId: string, fallback: number): number {
    return this.sources.get(nsId, sourceId)?.credibility ?? fallback;
  }

  /** A source's credibility as it was at transaction time `knownAt` (an as-of read's). */
  credibilityAt(nsId: number, sourceId: string, knownAt: number, fallback: number): number {
    return this.sources.credibilityAt(nsId, sourceId, knownAt) ?? fallback;
  }
}

function toNamespace(row: NamespaceRow): Namespace {
  const mode = (NAMESPACE_MODES as readonly string[]).includes(row.mode) ? (row.mode as NamespaceMode) : 'general';
  return { id: row.id, tenant: row.tenant, name: row.name, mode };
}
