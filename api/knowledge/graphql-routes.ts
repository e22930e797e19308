/**
 * GraphQL on the REST listener (`POST /graphql`): search, version, features, migrations,
 * explainRank and the review side (`graphql-review.ts`), resolved by the same services as REST; errors carry the REST error table's code.
 */
import Router from '@koa/router';
import { buildSchema, graphql, type GraphQLError, type GraphQLFormattedError } from 'graphql';
import { compileValidator } from '../../domain/json-schema.js';
import { isDomainError } from '../../domain/errors.js';
import type { NamespaceMode } from '../../domain/knowledge/modes.js';
import type { SearchFilter } from '../../domain/knowledge/retrieval/search-filter.js';
import { FEATURES } from '../../knowledge/introspection/introspection.js';
import { versionReport, type IntrospectionSources } from '../../knowledge/introspection/introspection-reports.js';
import type { KnowledgeServices } from '../../knowledge/index.js';
import { parseTime } from '../../knowledge/core/time.js';
import { errorResponse } from '../http/error-middleware.js';
import { requirePermission } from './auth.js';
import type { Principal } from './tenant-tokens.js';
import type { KnowledgeMetrics } from './metrics.js';
import { retrievalLabels } from './metric-labels.js';
import { REVIEW_SDL, reviewResolvers } from './graphql-review.js';
import { ACQUISITION_SDL, acquisitionResolvers } from './acquisition-routes.js';

/** The GraphQL schema (SDL). */
export const KNOWLEDGE_SDL = /* GraphQL */ `
  enum Mode { general belief_system agent_memory procedural }

  input SearchFilter {
    and: [SearchFilter!]
    or: [SearchFilter!]
    not: SearchFilter
    contentContains: String
    similarityMin: Float
    hasEdgeTo: ID
    edgeTypes: [String!]
    edgeWeightMin: Float
    sourceCredibilityMin: Float
    sourceCredibilityMax: Float
    validAt: String
    validFromBefore: String
    validToAfter: String
  }

  type ScoreBreakdown { similarity: Float! confidence: Float! recency: Float! utility: Float! }
  type NodeRef { id: ID! content: String! }
  type SearchEdge { type: String! weight: Float! to: NodeRef! }
  type SearchSource { name: String! effectiveCredibility: Float! }
  type SearchNode {
    id: ID!
    content: String!
    score: Float!
    scoreBreakdown: ScoreBreakdown!
    credibility: Float!
    edges: [SearchEdge!]!
    sources: [SearchSource!]!
  }
  type SearchResult { totalCount: Int! nodes: [SearchNode!]! }

  type Feature { name: String! status: String! since: String! description: String! family: String }
  type Migration { version: Int! name: String! appliedAt: String }
  type VersionInfo {
    version: String!
    apiVersion: String!
    docsVersion: String!
    compatibility: String!
    latestMigration: Int!
    releaseNotesPath: String!
    features: [Feature!]!
    migrations: [Migration!]!
  }

  type EvidenceLink { nodeId: ID! edgeId: ID! edgeWeight: Float! confidence: Float! text: String! }
  type RankEvidence { compoundConfidence: Float! supportCount: Int! links: [EvidenceLink!]! }
  type RankSide { nodeId: ID! score: Float! scoreBreakdown: ScoreBreakdown! evidence: RankEvidence! }
  type RankFactor { factor: String! nodeContribution: Float! otherContribution: Float! delta: Float! }
  type ExplainRank {
    winnerNodeId: ID!
    loserNodeId: ID!
    margin: Float!
    summary: String!
    node: RankSide!
    other: RankSide!
    factors: [RankFactor!]!
  }

  type Query {
    search(namespace: String = "default", mode: Mode = general, query: String!, filter: SearchFilter, limit: Int = 10): SearchResult!
    version: VersionInfo!
    features: [Feature!]!
    migrations: [Migration!]!
    explainRank(namespace: String = "default", nodeId: ID!, otherNodeId: ID!, query: String): ExplainRank!
  }
`;

const schema = buildSchema(KNOWLEDGE_SDL + REVIEW_SDL + ACQUISITION_SDL);

export const validateGraphqlBody = compileValidator<{
  query: string;
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
}>(
  {
    type: 'object',
    required: ['query'],
    properties: {
      query: { type: 'string', minLength: 1, maxLength: 100_000 },
      variables: { type: ['object', 'null'] },
      operationName: { type: ['string', 'null'] },
    },
  },
  'GraphQL request',
);

interface RawFilter {
  readonly and?: RawFilter[] | null;
  readonly or?: RawFilter[] | null;
  readonly not?: RawFilter | null;
  readonly validAt?: string | null;
  readonly validFromBefore?: string | null;
  readonly validToAfter?: string | null;
  readonly [key: string]: unknown;
}

/** Converts the GraphQL filter input (ISO times) into the domain filter (epoch ms). */
function toFilter(raw: RawFilter | null | undefined, path = 'filter'): SearchFilter | undefined {
  if (!raw) return undefined;
  return {
    ...(raw as SearchFilter),
    and: raw.and?.map((f, i) => toFilter(f, `${path}.and[${i}]`)!) ?? null,
    or: raw.or?.map((f, i) => toFilter(f, `${path}.or[${i}]`)!) ?? null,
    not: toFilter(raw.not, `${path}.not`) ?? null,
    validAt: parseTime(`${path}.validAt`, raw.validAt) ?? null,
    validFromBefore: parseTime(`${path}.validFromBefore`, raw.validFromBefore) ?? null,
    validToAfter: parseTime(`${path}.validToAfter`, raw.validToAfter) ?? null,
  };
}

function formatError(error: GraphQLError): GraphQLFormattedError {
  const original = error.originalError;
  if (
    original &&
    !(original as { locations?: unknown }).locations &&
    (isDomainError(original) || original.name !== 'GraphQLError')
  ) {
    const { status, body } = errorResponse(original);
    return {
      message: body.error.message,
      ...(error.path ? { path: error.path } : {}),
      extensions: { code: body.error.code, status, details: body.error.details },
    };
  }
  return {
    message: error.message,
    ...(error.locations ? { locations: error.locations } : {}),
    ...(error.path ? { path: error.path } : {}),
    extensions: { code: 'graphql_validation_failed', status: 400 },
  };
}

/** `POST /graphql`. */
export function graphqlRoutes(
  services: KnowledgeServices,
  introspection: IntrospectionSources,
  metrics: KnowledgeMetrics,
): Router {
  const router = new Router();
  const migrations = () =>
    introspection.migrations().map((m) => ({ version: m.version, name: m.name, appliedAt: m.appliedAt }));
  router.post('/graphql', async (ctx) => {
    const principal: Principal = requirePermission(ctx, 'read');
    const body = validateGraphqlBody(ctx.request.body);
    const rootValue = {
      ...reviewResolvers(services, principal.tenant, () => requirePermission(ctx, 'write')),
      ...acquisitionResolvers(services, principal.tenant),
      search: (args: {
        namespace: string;
        mode: NamespaceMode;
        query: string;
        filter?: RawFilter | null;
        limit: number;
      }) =>
        metrics.timeRetrieve(
          () =>
            services.search.search(
              principal.tenant,
              args.namespace,
              args.mode,
              args.query,
              toFilter(args.filter),
              Math.max(0, Math.min(args.limit, 1000)),
            ),
          retrievalLabels(services, principal.tenant, args.namespace, { text: args.query }),
        ),
      version: () => {
        const v = versionReport(introspection);
        return {
          version: v.version,
          apiVersion: v.api_version,
          docsVersion: v.docs_version,
          compatibility: v.compatibility,
          latestMigration: v.latest_migration,
          releaseNotesPath: v.release_notes_path,
          features: FEATURES,
          migrations: migrations(),
        };
      },
      features: () => FEATURES,
      migrations,
      explainRank: (args: { namespace: string; nodeId: string; otherNodeId: string; query?: string | null }) =>
        services.explainRank.explain(principal.tenant, args.namespace, {
          nodeId: args.nodeId.toLowerCase(),
          otherNodeId: args.otherNodeId.toLowerCase(),
          ...(args.query ? { text: args.query } : {}),
        }),
    };
    const result = await graphql({
      schema,
      source: body.query,
      rootValue,
      variableValues: body.variables ?? null,
      operationName: body.operationName ?? null,
    });
    const errors = result.errors?.map(formatError);
    const firstStatus = Number(errors?.[0]?.extensions?.status ?? 400);
    ctx.status = result.data === undefined || result.data === null ? firstStatus : 200;
    ctx.body = { ...(result.data !== undefined ? { data: result.data } : {}), ...(errors ? { errors } : {}) };
  });
  return router;
}
