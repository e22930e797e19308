/**
 * The route entries of the knowledge store's OpenAPI document, one group per capability.
 */
import type { RouteDocGroup } from '../route-doc.js';
import { KNOWLEDGE_META_ROUTE_DOCS, NAMESPACE_ROUTE_DOCS } from './namespace-route-docs.js';
import { ACQUISITION_ROUTE_DOCS, REVIEW_ROUTE_DOCS } from './review-route-docs.js';
import { ADMIN_ROUTE_DOCS } from './admin-route-docs.js';

export const KNOWLEDGE_ROUTE_DOCS: readonly RouteDocGroup[] = [
  KNOWLEDGE_META_ROUTE_DOCS,
  NAMESPACE_ROUTE_DOCS,
  REVIEW_ROUTE_DOCS,
  ACQUISITION_ROUTE_DOCS,
  ADMIN_ROUTE_DOCS,
];
