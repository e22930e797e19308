/**
 * Labels of the knowledge store's request metrics, read from the services: the namespace's mode
 * (after the request ran, so a write that created the namespace is labelled with its mode) and
 * the retrieval path class of a query.
 */
import { retrievalPathOf, type RetrievalQueryShape } from '../../domain/knowledge/retrieval/retrieval-path.js';
import type { KnowledgeServices } from '../../knowledge/index.js';
import { UNKNOWN_MODE, type RetrievalLabels } from './metrics.js';

/** Reads the mode of `namespace` when called: one of the four modes, or `unknown` when it does not exist. */
export function modeLabel(services: KnowledgeServices, tenant: string, namespace: string): () => string {
  return () => services.core.modeOf(tenant, namespace) ?? UNKNOWN_MODE;
}

/** The labels of a retrieval of `query` in `namespace`. */
export function retrievalLabels(
  services: KnowledgeServices,
  tenant: string,
  namespace: string,
  query: RetrievalQueryShape,
): RetrievalLabels {
  return {
    mode: modeLabel(services, tenant, namespace),
    path: retrievalPathOf(query, services.core.embedder !== undefined),
  };
}
