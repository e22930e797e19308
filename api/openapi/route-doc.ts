/**
 * What the OpenAPI document says of one route beyond its method and path (which come from the
 * routers): summary, caller, parameters, request body and answer. Keyed `METHOD /path/{param}`.
 */

/** A JSON Schema (2020-12) as the routes validate with or as generated from an answer type. */
export type JsonSchema = object;

/** Who may call a route of the knowledge store: nobody in particular, or a tenant token with a permission. */
export const KnowledgeCaller = {
  public: 'public',
  read: 'read',
  write: 'write',
  admin: 'admin',
} as const;
export type KnowledgeCaller = (typeof KnowledgeCaller)[keyof typeof KnowledgeCaller];

/** One query parameter of a route. */
export interface QueryParamDoc {
  readonly name: string;
  readonly description: string;
  /** @default { type: 'string' } */
  readonly schema?: JsonSchema;
  readonly required?: boolean;
}

/** A request body: a named schema the route validates with (published under `components.schemas`). */
export interface BodyDoc {
  /** The component name, also the generated TypeScript type's name. */
  readonly name: string;
  readonly schema: JsonSchema;
  /** @default 'application/json' */
  readonly contentType?: string;
  /** True when the body may be left out. @default false */
  readonly optional?: boolean;
}

/** The success answer of a route. */
export interface AnswerDoc {
  /** @default 200 */
  readonly status?: number;
  /** A component schema name (a type of `scripts/openapi/answer-types.ts`) or an inline schema; absent when the answer has no typed shape yet. */
  readonly schema?: string | JsonSchema;
  /** @default 'application/json' */
  readonly contentType?: string;
  /** What the answer holds, said in words (required when there is no schema). */
  readonly description?: string;
}

/** The document entry of one route. */
export interface RouteDoc {
  readonly summary: string;
  readonly description?: string;
  /** Knowledge store only: the permission the caller's token needs; the control plane derives it from its auth rules. */
  readonly caller?: KnowledgeCaller;
  readonly query?: readonly QueryParamDoc[];
  readonly body?: BodyDoc;
  readonly answer?: AnswerDoc;
  /** Error statuses the route answers beyond those every route may (400, 401, 403, 500). */
  readonly errors?: readonly number[];
  /** The header `Idempotency-Key` is honoured (`required` when the route refuses to run without it). */
  readonly idempotencyKey?: 'optional' | 'required';
}

/** Route entries by `METHOD /path/{param}`, grouped under one tag (the capability). */
export interface RouteDocGroup {
  readonly tag: string;
  readonly description: string;
  readonly routes: Readonly<Record<string, RouteDoc>>;
}
