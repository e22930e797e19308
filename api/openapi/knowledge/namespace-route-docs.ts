/**
 * Route entries of the knowledge store's introspection, namespace reads and writes, and GraphQL.
 */
import {
  validateEdge,
  validateExplainRank,
  validateReconcile,
  validateRetract,
  validateRetrieve,
  validateSourceLabel,
  validateWrite,
} from '../../knowledge/request-schemas.js';
import { validateEnvelope } from '../../knowledge/write-batch-route.js';
import { validateGraphqlBody } from '../../knowledge/graphql-routes.js';
import type { RouteDocGroup } from '../route-doc.js';

const envelope = validateEnvelope.schema as { properties: { writes: object } };

export const KNOWLEDGE_META_ROUTE_DOCS: RouteDocGroup = {
  tag: 'introspection',
  description: 'Liveness, version, features, migrations, backends and statistics of the store.',
  routes: {
    'GET /v1/ping': { summary: 'Liveness (open)', caller: 'public', answer: { schema: 'PingAnswer' } },
    'GET /v1/openapi.json': {
      summary: 'This OpenAPI 3.1 description of the knowledge store API (open)',
      caller: 'public',
      answer: { schema: { type: 'object' }, description: 'The OpenAPI document.' },
    },
    'GET /v1/version': {
      summary: 'Version and build of the store',
      caller: 'read',
      answer: { schema: 'KnowledgeVersionAnswer' },
    },
    'GET /v1/features': {
      summary: 'The features this store serves',
      caller: 'read',
      answer: { schema: 'FeaturesAnswer' },
    },
    'GET /v1/migrations': {
      summary: 'The applied schema migrations',
      caller: 'read',
      answer: { schema: 'MigrationsAnswer' },
    },
    'GET /v1/backends': {
      summary: 'The storage, vector index, embedder, reranker and extractor in use',
      caller: 'read',
      answer: { schema: 'BackendsAnswer' },
    },
    'GET /v1/stats': {
      summary: 'Node, edge and vector counts and runtime totals',
      caller: 'read',
      answer: { schema: 'KnowledgeStatsAnswer' },
    },
  },
};

export const NAMESPACE_ROUTE_DOCS: RouteDocGroup = {
  tag: 'namespaces',
  description: 'Writes, retrieval, nodes, edges, sources and recovery in one namespace of the caller’s tenant.',
  routes: {
    'POST /v1/namespaces/{ns}/write': {
      summary: 'Writes one claim; the admission decides whether it is stored',
      caller: 'write',
      body: { name: 'WriteRequest', schema: validateWrite.schema },
      answer: { schema: 'WriteAnswer' },
      errors: [413],
    },
    'POST /v1/namespaces/{ns}/write/batch': {
      summary: 'Writes up to 1,000 claims; each item answers as a single write would, in order',
      caller: 'write',
      body: {
        name: 'WriteBatchRequest',
        schema: { ...envelope, properties: { writes: { ...envelope.properties.writes, items: validateWrite.schema } } },
      },
      answer: { description: '`{ results }`: per item the write result or its error, with its status.' },
      errors: [413],
    },
    'POST /v1/namespaces/{ns}/retrieve': {
      summary: 'Ranked retrieval by vector, vectors, text or seed ids, with filters and a score breakdown',
      caller: 'read',
      body: { name: 'RetrieveRequest', schema: validateRetrieve.schema },
      answer: { schema: 'RetrieveAnswer' },
    },
    'POST /v1/namespaces/{ns}/rank/explain': {
      summary: 'Why one node outranks another for a query',
      caller: 'read',
      body: { name: 'ExplainRankRequest', schema: validateExplainRank.schema },
      answer: { description: 'Both score breakdowns and the deciding factors.' },
    },
    'GET /v1/namespaces/{ns}/nodes/{id}': {
      summary: 'One node with its validity, knowledge time and history',
      caller: 'read',
      query: [
        { name: 'valid_at', description: 'The node as it was valid at this time.' },
        { name: 'known_at', description: 'The node as it was known at this time.' },
        { name: 'history', description: '`true`: with its version history.' },
      ],
      answer: { schema: 'NodeAnswer' },
    },
    'POST /v1/namespaces/{ns}/nodes/{id}/retract-source': {
      summary: "Retracts a source's support of a node",
      caller: 'write',
      body: { name: 'RetractRequest', schema: validateRetract.schema },
      answer: { status: 204, description: 'Retracted.' },
    },
    'POST /v1/namespaces/{ns}/nodes/{id}/edges': {
      summary: 'Adds an edge from a node',
      caller: 'write',
      body: { name: 'EdgeRequest', schema: validateEdge.schema },
      answer: { status: 201, description: 'The edge.' },
    },
    'POST /v1/namespaces/{ns}/sources/label': {
      summary: 'Labels a source (credibility input)',
      caller: 'write',
      body: { name: 'SourceLabelRequest', schema: validateSourceLabel.schema },
      answer: { description: 'The source with its labels.' },
    },
    'GET /v1/namespaces/{ns}/sources/{sourceID}/trust': {
      summary: "A source's credibility timeline",
      caller: 'read',
      answer: { description: 'The credibility timeline.' },
    },
    'GET /v1/namespaces/{ns}/recovery/pending': {
      summary: 'Writes interrupted before they were committed',
      caller: 'read',
      answer: { description: 'The pending writes.' },
    },
    'POST /v1/namespaces/{ns}/recovery/reconcile': {
      summary: 'Replays interrupted writes (a preview unless `execute: true`)',
      caller: 'write',
      body: { name: 'RecoveryReconcileRequest', schema: validateReconcile.schema, optional: true },
      answer: { description: 'What was or would be replayed.' },
    },
    'POST /graphql': {
      summary:
        'GraphQL: search, introspection, explainRank, narrative, feedback, review and handoff queries and mutations',
      caller: 'read',
      description: 'Mutations need the `write` permission.',
      body: { name: 'GraphqlRequest', schema: validateGraphqlBody.schema },
      answer: { description: 'A GraphQL result `{ data, errors }`.' },
    },
  },
};
