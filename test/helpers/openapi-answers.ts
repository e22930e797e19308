/**
 * Checks real answers against the answer schemas of a served OpenAPI document (ajv, JSON Schema
 * 2020-12): the status must be one the document gives the route, and the body must match its schema.
 */
import type { ExecutionContext } from 'ava';
import { Ajv2020 } from 'ajv/dist/2020.js';

/** An OpenAPI document as served (`GET /api/openapi.json`, `GET /v1/openapi.json`). */
export interface ServedDocument {
  readonly paths: Record<string, any>;
}

/** A checker of answers against `document`; `checked` counts the answers it validated. */
export function openApiAnswers(t: ExecutionContext, document: ServedDocument) {
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
  ajv.addSchema(document, 'openapi');
  let checked = 0;
  return {
    /** Asserts that `answer` to `method path` (an OpenAPI path, `/api/apps/{id}`) matches its typed answer schema. */
    check(method: string, path: string, answer: { status: number; body: unknown }) {
      const response = document.paths[path]?.[method.toLowerCase()]?.responses?.[String(answer.status)];
      t.truthy(response, `${method} ${path} answered ${answer.status}, which the document does not give`);
      if (!response) return;
      t.falsy(response['x-svc-untyped'], `${method} ${path} has a typed answer schema`);
      const pointer = [
        'paths',
        path,
        method.toLowerCase(),
        'responses',
        String(answer.status),
        'content',
        'application/json',
        'schema',
      ]
        .map((part) => encodeURIComponent(part.replaceAll('~', '~0').replaceAll('/', '~1')))
        .join('/');
      const validate = ajv.compile({ $ref: `openapi#/${pointer}` });
      t.true(validate(answer.body), `${method} ${path}: ${ajv.errorsText(validate.errors)}`);
      checked += 1;
    },
    get checked() {
      return checked;
    },
  };
}
