/**
 * Builds an OpenAPI 3.1 document from the routes a service's routers serve and the route entries
 * that describe them. Every served route must have an entry and every entry a served route: the
 * document names exactly what the routers answer.
 */
import type { JsonSchema, QueryParamDoc, RouteDoc, RouteDocGroup } from './route-doc.js';

/** A route as a router serves it: upper-case method and an OpenAPI path (`/api/apps/{id}`). */
export interface ServedRoute {
  readonly method: string;
  readonly path: string;
  /** The server (by index into {@link OpenApiSource.servers}) that serves it when not the first. */
  readonly server?: number;
}

/** How a route's caller is authenticated, as the document states it. */
export interface RouteAuth {
  /** True when the route needs no credentials. */
  readonly public: boolean;
  /** Who may call it, in words (`x-svc-auth`). */
  readonly text: string;
}

/** Everything the document is built from. */
export interface OpenApiSource {
  readonly title: string;
  readonly version: string;
  readonly description: string;
  readonly servers: readonly { readonly url: string; readonly description: string }[];
  readonly routes: readonly ServedRoute[];
  readonly groups: readonly RouteDocGroup[];
  /** Answer schemas by type name (generated from the answer types), published under `components.schemas`. */
  readonly answerSchemas: Readonly<Record<string, JsonSchema>>;
  /** The bearer credential, in words. */
  readonly bearerDescription: string;
  readonly auth: (route: ServedRoute, doc: RouteDoc) => RouteAuth;
}

/** The key of a route in the route entries: `GET /api/apps/{id}`. */
export function routeKey(route: { readonly method: string; readonly path: string }): string {
  return `${route.method} ${route.path}`;
}

/** A Koa router path (`/api/apps/:id`) as an OpenAPI path (`/api/apps/{id}`). */
export function openApiPath(koaPath: string): string {
  return koaPath.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

/** The routes of `@koa/router` instances (their `stack`), HEAD left out (Koa answers it for every GET). */
export function servedRoutes(
  routers: readonly {
    readonly stack: readonly { readonly path: string | RegExp; readonly methods: readonly string[] }[];
  }[],
  server?: number,
): ServedRoute[] {
  return routers.flatMap((router) =>
    router.stack.flatMap((layer) => {
      if (typeof layer.path !== 'string')
        throw new Error(`a route path is a regular expression (${String(layer.path)}): give it a string path`);
      const path = layer.path;
      return layer.methods
        .filter((method) => method !== 'HEAD')
        .map((method) => ({ method, path: openApiPath(path), ...(server === undefined ? {} : { server }) }));
    }),
  );
}

/** The error statuses every route may answer, with their meaning. */
const ERROR_STATUSES: Readonly<Record<number, string>> = {
  400: 'The request is not valid (a field, a query parameter or the body).',
  401: 'No credentials, or credentials that are not valid.',
  403: 'The credentials do not reach this route.',
  404: 'What the path names does not exist.',
  409: 'The request conflicts with the current state.',
  413: 'The body is larger than the limit.',
  422: 'The request is well formed but cannot be carried out.',
  429: 'Too many requests; `Retry-After` says when to try again.',
  500: 'An internal error (only `internal_error` and the request id).',
  502: 'A process the route ran failed.',
  503: 'A service the route needs is not available.',
  504: 'A process the route waited for did not answer in time.',
};

const ERROR_ANSWER: JsonSchema = {
  type: 'object',
  description: 'Every error answer: a stable code, a message that names the subject and the broken rule, details.',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', description: 'A stable, snake_case error code.' },
        message: { type: 'string' },
        details: { description: 'Structured details (the field, the problems, the state that conflicts).' },
        requestId: { type: 'string' },
      },
    },
  },
};

function pathParams(path: string): string[] {
  return [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
}

function operationId(route: ServedRoute): string {
  const words = route.path
    .replace(/[{}]/g, '')
    .split(/[^A-Za-z0-9]+/)
    .filter((w) => w !== '');
  return [route.method.toLowerCase(), ...words.map((w) => w[0]!.toUpperCase() + w.slice(1))].join('');
}

function queryParameter(param: QueryParamDoc): Record<string, unknown> {
  return {
    name: param.name,
    in: 'query',
    required: param.required ?? false,
    description: param.description,
    schema: param.schema ?? { type: 'string' },
  };
}

function schemaRef(name: string): JsonSchema {
  return { $ref: `#/components/schemas/${name}` };
}

function errorResponses(route: ServedRoute, doc: RouteDoc, auth: RouteAuth): Record<string, unknown> {
  const statuses = new Set<number>([400, 500, ...(doc.errors ?? [])]);
  if (!auth.public) {
    statuses.add(401);
    statuses.add(403);
  }
  if (pathParams(route.path).length > 0) statuses.add(404);
  return Object.fromEntries(
    [...statuses].sort().map((status) => [String(status), { $ref: `#/components/responses/Error${status}` }]),
  );
}

function successResponse(doc: RouteDoc): [string, unknown] {
  const answer = doc.answer ?? {};
  const status = String(answer.status ?? 200);
  const contentType = answer.contentType ?? 'application/json';
  const typed = answer.schema !== undefined;
  const description =
    answer.description ?? (typed ? 'The answer.' : 'The answer (its shape has no published schema yet).');
  if (status === '204') return [status, { description }];
  const schema = typed ? (typeof answer.schema === 'string' ? schemaRef(answer.schema) : answer.schema) : {};
  return [
    status,
    {
      description,
      ...(typed ? {} : { 'x-svc-untyped': true }),
      content: { [contentType]: { schema } },
    },
  ];
}

function operation(route: ServedRoute, tag: string, doc: RouteDoc, source: OpenApiSource): Record<string, unknown> {
  const auth = source.auth(route, doc);
  const parameters = [
    ...pathParams(route.path).map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })),
    ...(doc.query ?? []).map(queryParameter),
    ...(doc.idempotencyKey === undefined
      ? []
      : [
          {
            name: 'Idempotency-Key',
            in: 'header',
            required: doc.idempotencyKey === 'required',
            description: 'A retry with the same key and body answers the first answer again.',
            schema: { type: 'string' },
          },
        ]),
  ];
  const [status, success] = successResponse(doc);
  const untyped = doc.answer?.schema === undefined && status !== '204';
  const description = [
    doc.description,
    untyped ? 'The answer has no typed schema yet; its content is described in words only.' : undefined,
  ]
    .filter((part) => part !== undefined)
    .join('\n\n');
  return {
    operationId: operationId(route),
    summary: doc.summary,
    ...(description === '' ? {} : { description }),
    tags: [tag],
    'x-svc-auth': auth.text,
    security: auth.public ? [] : [{ bearer: [] }],
    ...(parameters.length === 0 ? {} : { parameters }),
    ...(doc.body === undefined
      ? {}
      : {
          requestBody: {
            required: doc.body.optional !== true,
            content: { [doc.body.contentType ?? 'application/json']: { schema: schemaRef(doc.body.name) } },
          },
        }),
    responses: { [status]: success, ...errorResponses(route, doc, auth) },
  };
}

/** Builds the document; throws when a served route has no entry or an entry names no served route. */
export function buildOpenApiDocument(source: OpenApiSource): Record<string, unknown> {
  const entries = new Map<string, { tag: string; doc: RouteDoc }>();
  for (const group of source.groups)
    for (const [key, doc] of Object.entries(group.routes)) {
      if (entries.has(key)) throw new Error(`route entry ${key} is given twice`);
      entries.set(key, { tag: group.tag, doc });
    }
  const served = new Set(source.routes.map(routeKey));
  const undocumented = [...served].filter((key) => !entries.has(key));
  const unserved = [...entries.keys()].filter((key) => !served.has(key));
  if (undocumented.length > 0 || unserved.length > 0)
    throw new Error(
      [
        undocumented.length > 0 ? `served routes without an entry: ${undocumented.join(', ')}` : '',
        unserved.length > 0 ? `entries of routes not served: ${unserved.join(', ')}` : '',
      ]
        .filter((line) => line !== '')
        .join('; '),
    );
  const paths: Record<string, Record<string, unknown>> = {};
  const requestSchemas: Record<string, JsonSchema> = {};
  const componentSchemas: Record<string, JsonSchema> = {};
  for (const route of source.routes) {
    if (paths[route.path]?.[route.method.toLowerCase()] !== undefined) continue;
    const { tag, doc } = entries.get(routeKey(route))!;
    if (doc.body !== undefined) {
      const known = requestSchemas[doc.body.name];
      if (known !== undefined && known !== doc.body.schema)
        throw new Error(`request schema ${doc.body.name} names two different schemas`);
      requestSchemas[doc.body.name] = doc.body.schema;
      componentSchemas[doc.body.name] = asComponent(doc.body.name, doc.body.schema);
    }
    const item = (paths[route.path] ??= {});
    const server = route.server === undefined ? undefined : source.servers[route.server];
    if (server !== undefined) item.servers = [server];
    item[route.method.toLowerCase()] = operation(route, tag, doc, source);
  }
  const usedErrors = new Set(
    [...JSON.stringify(paths).matchAll(/#\/components\/responses\/Error(\d+)/g)].map((m) => Number(m[1])),
  );
  const sortedPaths = Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b)));
  return {
    openapi: '3.1.0',
    info: {
      title: source.title,
      version: source.version,
      description: source.description,
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    servers: source.servers.slice(0, 1),
    tags: source.groups.map((group) => ({ name: group.tag, description: group.description })),
    paths: sortedPaths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: source.bearerDescription } },
      schemas: sortKeys({ ErrorAnswer: ERROR_ANSWER, ...source.answerSchemas, ...componentSchemas }),
      responses: Object.fromEntries(
        Object.entries(ERROR_STATUSES)
          .filter(([status]) => usedErrors.has(Number(status)))
          .map(([status, description]) => [
            `Error${status}`,
            { description, content: { 'application/json': { schema: schemaRef('ErrorAnswer') } } },
          ]),
      ),
    },
  };
}

/**
 * A request schema as a component: `$schema` and `$id` dropped (the document's dialect applies) and
 * its own `#/...` references re-rooted under the component.
 */
function asComponent(name: string, schema: JsonSchema): JsonSchema {
  const { $schema: _dialect, $id: _id, ...rest } = schema as Record<string, unknown>;
  return JSON.parse(JSON.stringify(rest).replaceAll('"#/', `"#/components/schemas/${name}/`)) as JsonSchema;
}

function sortKeys<T>(record: Readonly<Record<string, T>>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}
