/**
 * `POST /ingest`: text in, claims extracted by the rule-based extractor (the default) or the
 * configured LLM extractor, each written through the durable write path (source credibility,
 * conflict detection) with a stable write identity (`request_id` `ingest:<hash>` of the document,
 * source, position and claim), so ingesting the same text again adds no duplicate
 * (docs/adr/0035-knowledge-acquisition.md, docs/adr/0037-rule-based-ingest.md).
 */
import { createHash } from 'node:crypto';
import { canonicalContent } from '../../domain/knowledge/fingerprint.js';
import type { MemType } from '../../domain/knowledge/modes.js';
import type { KnowledgeState } from '../core/knowledge-state.js';
import type { WriteService } from '../write/write-service.js';
import type { Extractor } from '../../domain/knowledge/model-ports.js';
import { RuleExtractor } from './ingest-extractor.js';

/** The REST ingest request. */
export interface IngestRequest {
  readonly text: string;
  readonly source_id: string;
  readonly labels?: readonly string[];
  readonly properties?: Record<string, unknown>;
  /** Used for claims without their own confidence. */
  readonly confidence?: number;
  readonly mem_type?: MemType;
  /** @default 50 */
  readonly max_claims?: number;
}

/** Most claims written per ingest. */
export const INGEST_MAX_CLAIMS = { default: 50, max: 200 } as const;

/** The variable that configures an LLM extractor in place of the rule-based default. */
export const EXTRACTOR_SETTING = 'SVC_KNOWLEDGE_EXTRACTOR_URL';

/** Extracts and writes claims. */
export class IngestService {
  readonly #core: KnowledgeState;
  readonly #writes: WriteService;
  readonly #extractor: Extractor;

  constructor(core: KnowledgeState, writes: WriteService, extractor: Extractor | undefined) {
    this.#core = core;
    this.#writes = writes;
    this.#extractor = extractor ?? new RuleExtractor();
  }

  /** The active extractor (for `/v1/backends`). */
  get extractor(): { readonly kind: string; readonly model: string } {
    return { kind: this.#extractor.kind, model: this.#extractor.model };
  }

  /**
   * Extracts claims from `request.text` and writes each; durable before it returns. The answer
   * counts what happened in the origin's terms: `nodes_written` (new nodes), `edges_written`
   * (ingest writes no edges) and `rejected` (claims the admission rules refused).
   */
  async ingest(tenant: string, nsName: string, request: IngestRequest) {
    this.#core.namespaceForWrite(tenant, nsName, undefined);
    const documentSha256 = createHash('sha256').update(request.text).digest('hex');
    const claims = await this.#extractor.extract(request.text, request.max_claims ?? INGEST_MAX_CLAIMS.default);
    const nodes = [];
    for (const [index, claim] of claims.entries()) {
      const requestId = `ingest:${createHash('sha256')
        .update(`${documentSha256}\u0000${request.source_id}\u0000${index}\u0000${canonicalContent(claim.content)}`)
        .digest('hex')
        .slice(0, 40)}`;
      const properties: Record<string, unknown> = {
        ...(request.properties ?? {}),
        ingest: { document_sha256: documentSha256, claim_index: index, model: this.#extractor.model },
      };
      if (claim.subject !== undefined && claim.predicate !== undefined)
        Object.assign(properties, {
          subject: claim.subject,
          predicate: claim.predicate,
          ...(claim.object !== undefined ? { object: claim.object } : {}),
        });
      const confidence = claim.confidence ?? request.confidence;
      const result = await this.#writes.write(tenant, nsName, {
        content: claim.content,
        source_id: request.source_id,
        labels: [...new Set([...(request.labels ?? []), ...(claim.labels ?? [])])].slice(0, 100),
        properties,
        ...(confidence !== undefined ? { confidence } : {}),
        ...(request.mem_type !== undefined ? { mem_type: request.mem_type } : {}),
        request_id: requestId,
      });
      nodes.push({ content: claim.content, request_id: requestId, ...result });
    }
    return {
      document_sha256: documentSha256,
      extractor: this.#extractor.kind,
      model: this.#extractor.model,
      extracted: claims.length,
      nodes_written: nodes.filter((n) => n.admitted && n.replayed !== true && n.deduplicated !== true).length,
      edges_written: 0,
      rejected: nodes.filter((n) => !n.admitted).length,
      nodes,
    };
  }
}
