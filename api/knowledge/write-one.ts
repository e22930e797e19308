/**
 * `POST /v1/namespaces/{ns}/write`'s semantics, shared by the Koa route and the write fast path
 * (ADR 0215): the body is validated (an empty content needs a vector), the write runs through the
 * write service (answered once its group commit is durable, ADR 0182), and it is counted and timed
 * with the namespace's mode label.
 */
import { ValidationError } from '../../domain/errors.js';
import type { KnowledgeServices } from '../../knowledge/index.js';
import type { KnowledgeMetrics } from './metrics.js';
import { modeLabel } from './metric-labels.js';
import { validateWrite } from './request-schemas.js';

/** Validates `raw` (throws a `ValidationError`) and writes it; resolves with the write's result. */
export async function writeOne(
  services: KnowledgeServices,
  metrics: KnowledgeMetrics,
  tenant: string,
  namespace: string,
  raw: unknown,
) {
  const body = validateWrite(raw);
  if (body.content === '' && body.vector === undefined) {
    throw new ValidationError('content: must not be empty unless a vector is given (a vector-only write)', {
      code: 'invalid_request',
      details: {
        problems: [
          { path: 'content', keyword: 'minLength', message: 'content: must not be empty unless a vector is given' },
        ],
      },
    });
  }
  return metrics.timeWrite(
    () => services.writes.write(tenant, namespace, body),
    (r) => (!r.admitted ? 'rejected' : r.deduplicated ? 'deduplicated' : 'admitted'),
    modeLabel(services, tenant, namespace),
  );
}
