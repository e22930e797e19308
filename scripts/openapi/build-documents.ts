/**
 * Builds the two OpenAPI documents from the routers the real composition roots build (a control
 * plane and a knowledge store started on ephemeral ports in a temporary folder, then stopped), the
 * route entries of `api/openapi/` and the answer schemas generated from
 * `scripts/openapi/answer-types.ts`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createGenerator } from 'ts-json-schema-generator';
import { loadConfig } from '../../platform/config.js';
import { silentLogger } from '../../platform/logger.js';
import { buildInfo } from '../../platform/build-info.js';
import { buildOpenApiDocument, servedRoutes, type ServedRoute } from '../../api/openapi/openapi-document.js';
import type { JsonSchema, RouteDoc } from '../../api/openapi/route-doc.js';
import { CONTROL_ROUTE_DOCS } from '../../api/openapi/control/index.js';
import { KNOWLEDGE_ROUTE_DOCS } from '../../api/openapi/knowledge/index.js';
import { EXPLICIT_AUTH_ONLY_ROUTES, isPublicPath, scopeForPath } from '../../api/control/auth/auth.js';

/** The routes each service's routers serve: the control plane's, the knowledge store's REST and admin listeners'. */
export interface ServedRoutes {
  readonly control: readonly ServedRoute[];
  readonly knowledge: readonly ServedRoute[];
}

/** Starts both services from their composition roots and lists the routes of their routers. */
export async function routesOfCompositionRoots(): Promise<ServedRoutes> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-openapi-'));
  try {
    const config = loadConfig({
      SVC_PORT: '0',
      SVC_KNOWLEDGE_PORT: '0',
      SVC_KNOWLEDGE_ADMIN_PORT: '0',
      SVC_HOST: '127.0.0.1',
      SVC_DATA_DIR: path.join(root, 'data'),
      SVC_APPS_DIR: path.join(root, 'apps'),
      SVC_LOG_LEVEL: 'silent',
      SVC_POSTGRES_MANAGED: 'false',
      SVC_CONTAINER_RUNTIME: 'native',
      SVC_REGISTRY_MIRROR: 'false',
    });
    const { startControlPlane } = await import('../../wiring/control-plane.js');
    const { startKnowledgeStore } = await import('../../wiring/knowledge-store.js');
    const plane = await startControlPlane(config, silentLogger());
    const control = servedRoutes(plane.routers);
    await plane.close();
    const store = await startKnowledgeStore(config, silentLogger());
    const knowledge = [...servedRoutes(store.routers.api), ...servedRoutes(store.routers.admin, 1)];
    await store.close();
    return { control, knowledge };
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/** JSON Schemas of every type `scripts/openapi/answer-types.ts` exports (and the types they name), by name. */
export function answerSchemas(checkout: string): Record<string, JsonSchema> {
  const generator = createGenerator({
    path: path.join(checkout, 'scripts', 'openapi', 'answer-types.ts'),
    tsconfig: path.join(checkout, 'tsconfig.json'),
    type: '*',
    expose: 'export',
    skipTypeCheck: true,
    jsDoc: 'extended',
    additionalProperties: false,
  });
  const schema = generator.createSchema('*');
  const text = JSON.stringify(schema.definitions ?? {}).replaceAll('"#/definitions/', '"#/components/schemas/');
  return JSON.parse(text) as Record<string, JsonSchema>;
}

function controlAuth(route: ServedRoute): { public: boolean; text: string } {
  const sample = route.path.replace(/\{[^}]+\}/g, 'x');
  if (isPublicPath(sample)) return { public: true, text: 'public: no credentials' };
  if (EXPLICIT_AUTH_ONLY_ROUTES.includes(`${route.method} ${route.path}`))
    return {
      public: true,
      text: 'open unless SVC_REQUIRE_EXPLICIT_AUTH=true; then the control token or a scoped token with metrics:read',
    };
  const scope = scopeForPath(sample);
  if (scope === 'fleet:external-admission') return { public: false, text: `a workload token with ${scope} only` };
  return {
    public: false,
    text:
      scope === undefined
        ? 'administrator: the control token or an edge access identity'
        : `administrator, or a scoped token with ${scope}`,
  };
}

function knowledgeAuth(_route: ServedRoute, doc: RouteDoc): { public: boolean; text: string } {
  const caller = doc.caller ?? 'read';
  return caller === 'public'
    ? { public: true, text: 'public: no credentials' }
    : {
        public: false,
        text: `a tenant token with the ${caller} permission (any request when the store runs without tokens)`,
      };
}

/** Both documents, built from the served routes and the answer schemas. */
export function buildDocuments(
  routes: ServedRoutes,
  answers: Readonly<Record<string, JsonSchema>>,
): { controlPlane: Record<string, unknown>; knowledgeStore: Record<string, unknown> } {
  const version = buildInfo().version;
  const controlPlane = buildOpenApiDocument({
    title: 'svc control plane API',
    version,
    description:
      'The control plane (port 8800). Errors are always `{ "error": { "code", "message", "details" } }`. Generated from the routers and the schemas the code validates with (ADR 0230).',
    servers: [{ url: 'http://127.0.0.1:8800', description: 'the control plane' }],
    routes: routes.control,
    groups: CONTROL_ROUTE_DOCS,
    answerSchemas: answers,
    bearerDescription:
      'The control token (SVC_API_TOKEN), or a scoped access token `svc_pat_...` for the routes its scopes name.',
    auth: controlAuth,
  });
  const knowledgeStore = buildOpenApiDocument({
    title: 'svc knowledge store API',
    version,
    description:
      'The knowledge store: the REST listener (port 7701) and the admin listener (port 7702, the paths that name it as their server). Errors are always `{ "error": { "code", "message", "details" } }`. Generated from the routers and the schemas the code validates with (ADR 0230).',
    servers: [
      { url: 'http://127.0.0.1:7701', description: 'the REST listener' },
      { url: 'http://127.0.0.1:7702', description: 'the admin listener' },
    ],
    routes: routes.knowledge,
    groups: KNOWLEDGE_ROUTE_DOCS,
    answerSchemas: answers,
    bearerDescription: 'A tenant token `tenant:permissions:secret` (permissions among read, write, admin).',
    auth: knowledgeAuth,
  });
  return { controlPlane: pruneSchemas(controlPlane), knowledgeStore: pruneSchemas(knowledgeStore) };
}

/** Drops the component schemas no operation reaches (each document keeps only its own answer types). */
function pruneSchemas(document: Record<string, unknown>): Record<string, unknown> {
  const components = document.components as { schemas: Record<string, unknown> };
  const reached = new Set<string>();
  const visit = (value: unknown): void => {
    const text = JSON.stringify(value);
    for (const match of text.matchAll(/"#\/components\/schemas\/([^"/]+)/g)) {
      const name = decodeURIComponent(match[1]!);
      if (reached.has(name)) continue;
      reached.add(name);
      if (components.schemas[name] === undefined)
        throw new Error(`the document references schema ${name}, which is not defined`);
      visit(components.schemas[name]);
    }
  };
  visit(document.paths);
  visit((document.components as { responses: unknown }).responses);
  const schemas = Object.fromEntries(Object.entries(components.schemas).filter(([name]) => reached.has(name)));
  return { ...document, components: { ...components, schemas } };
}
