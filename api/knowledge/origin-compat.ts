/**
 * The origin's wire format on our routes (docs/adr/0036-origin-wire-compatibility.md): the `mode`
 * its clients send on every body, its "zero means default" score parameters, and its empty-string
 * "unset" values. Pure translation at the HTTP edge; services keep our meanings.
 */
import { ConflictError, NotFoundError } from '../../domain/errors.js';
import type { NamespaceMode } from '../../domain/knowledge/modes.js';
import type { KnowledgeServices, RetrieveRequest } from '../../knowledge/index.js';

/**
 * Applies a body's `mode` to its namespace. Routes that create namespaces (`create`) create it in
 * that mode; elsewhere a missing namespace is left to the service's 404. An existing namespace with
 * another mode is a 409 `namespace_mode_mismatch`: a namespace's mode is fixed when it is created.
 */
export function applyMode(
  services: KnowledgeServices,
  tenant: string,
  nsName: string,
  mode: NamespaceMode | undefined,
  create = false,
): void {
  if (mode === undefined) return;
  if (create) {
    services.core.namespaceForWrite(tenant, nsName, mode);
    return;
  }
  let current: NamespaceMode;
  try {
    current = services.core.namespace(tenant, nsName).mode;
  } catch (error) {
    if (error instanceof NotFoundError) return;
    throw error;
  }
  if (current !== mode) {
    throw new ConflictError(
      `namespace "${nsName}" has mode ${current}; this request says ${mode} (a namespace's mode is fixed when it is created)`,
      {
        code: 'namespace_mode_mismatch',
        details: { mode: current, requested: mode },
      },
    );
  }
}

/**
 * Score parameters with the origin's meaning of zero: four zero weights (what its SDKs send when
 * only `decay_alpha` is set, or nothing) mean the mode's default weights, and `decay_alpha` 0 means
 * the memory type's decay rate. Any non-zero weight keeps our meaning: unset weights stay at the
 * mode default, given ones (zeros included) replace it.
 */
export function originScoreParams(params: RetrieveRequest['score_params']): RetrieveRequest['score_params'] {
  if (params === undefined) return undefined;
  const { decay_alpha: decayAlpha, ...weights } = params;
  const allZero = Object.values(weights).every((w) => w === undefined || w === 0);
  const out = {
    ...(allZero ? {} : weights),
    ...(decayAlpha !== undefined && decayAlpha > 0 ? { decay_alpha: decayAlpha } : {}),
  };
  return Object.keys(out).length === 0 ? undefined : out;
}

/** A string the origin's clients send as `''` when unset: empty or blank means absent. */
export function present(value: string | null | undefined): string | undefined {
  return value === undefined || value === null || value.trim() === '' ? undefined : value;
}

/** A list the origin's clients send as `[]` or `null` when unset. */
export function presentList<T>(value: readonly T[] | null | undefined): readonly T[] | undefined {
  return value === undefined || value === null || value.length === 0 ? undefined : value;
}
