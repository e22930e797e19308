/**
 * The knowledge store services, built once over an open `knowledge.db`.
 */
import type { Db } from '../store/database.js';
import { KnowledgeCore, type KnowledgeCoreOptions } from './knowledge-core.js';
import { WriteService } from './write-service.js';
import { RetrieveService } from './retrieve-service.js';
import { NodeService } from './node-service.js';
import { SourceService } from './source-service.js';
import { RecoveryService } from './recovery-service.js';
import { ExplainRankService } from './explain-rank.js';
import { SearchService } from './search-service.js';

export { KnowledgeCore, type KnowledgeCoreOptions, type Namespace, type Reranker } from './knowledge-core.js';
export { WriteService, NIL_UUID, type WriteRequest, type WriteResult } from './write-service.js';
export { RetrieveService, type RetrieveRequest, type RankedNode } from './retrieve-service.js';
export { NodeService, type RetractRequest, type EdgeRequest } from './node-service.js';
export { SourceService, type SourceLabelRequest } from './source-service.js';
export { RecoveryService } from './recovery-service.js';
export { ExplainRankService, explainRankRest, type ExplainRankResult } from './explain-rank.js';
export { SearchService, type SearchNode } from './search-service.js';
export { HttpEmbedder, type Embedder, type HttpEmbedderOptions } from './embedder.js';
export { VectorIndex } from './vector-index.js';

/** Every knowledge service, sharing one core. */
export interface KnowledgeServices {
  readonly core: KnowledgeCore;
  readonly writes: WriteService;
  readonly retrieval: RetrieveService;
  readonly nodes: NodeService;
  readonly sources: SourceService;
  readonly recovery: RecoveryService;
  readonly explainRank: ExplainRankService;
  readonly search: SearchService;
}

/** Builds the services over `db` (its migrations must already be applied). */
export function createKnowledgeServices(db: Db, options: KnowledgeCoreOptions = {}): KnowledgeServices {
  const core = new KnowledgeCore(db, options);
  const writes = new WriteService(core);
  const retrieval = new RetrieveService(core);
  const nodes = new NodeService(core, writes);
  return {
    core,
    writes,
    retrieval,
    nodes,
    sources: new SourceService(core),
    recovery: new RecoveryService(core, writes, nodes),
    explainRank: new ExplainRankService(core),
    search: new SearchService(core, retrieval),
  };
}
