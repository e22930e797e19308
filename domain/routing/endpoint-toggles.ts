/**
 * Endpoint toggles: an operator switches one public hostname off (or back on) without touching the
 * rest of the app's routing.
 */
import { ValidationError } from '../errors.js';
import type { CanonicalAppSpec } from '../spec/index.js';
import { normalizeHostname } from './hostnames.js';

/** A stored toggle. */
export interface EndpointToggle {
  readonly app: string;
  readonly hostname: string;
  readonly enabled: boolean;
  readonly updatedAt: string;
}

/** The disabled hostnames among `toggles`. */
export function disabledHostnames(toggles: readonly EndpointToggle[]): Set<string> {
  return new Set(toggles.filter((t) => !t.enabled).map((t) => t.hostname));
}

/**
 * The normalized hostname of a toggle request, checked against the app's declared endpoints.
 * @throws ValidationError when the hostname is malformed or not declared by the app.
 */
export function toggleHostname(spec: CanonicalAppSpec, hostname: string): string {
  const normalized = normalizeHostname(hostname);
  if (normalized === undefined)
    throw new ValidationError(`hostname: "${hostname}" is not a hostname such as app.example.com`, {
      code: 'invalid_hostname',
      details: { hostname },
    });
  const declared = (spec.endpoints ?? [])
    .map((e) => normalizeHostname(e.url))
    .filter((h): h is string => h !== undefined);
  if (!declared.includes(normalized)) {
    throw new ValidationError(
      `hostname: "${normalized}" is not an endpoint of app "${spec.name}" (declared: ${declared.join(', ') || 'none'})`,
      {
        code: 'endpoint_not_declared',
        details: { app: spec.name, hostname: normalized, declared },
      },
    );
  }
  return normalized;
}
