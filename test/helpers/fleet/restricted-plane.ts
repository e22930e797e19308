/**
 * Starts a restricted-mode control plane in this process from an environment (the restricted
 * fixture's), with a logger whose lines the test can read back.
 */
import type { ExecutionContext } from 'ava';
import { pino } from 'pino';
import { loadConfig } from '../../../platform/config.js';
import { loadRestrictedMode } from '../../../platform/fleet/restricted-config.js';
import { REDACT_PATHS } from '../../../platform/logger.js';
import { startRestrictedPlane, type RestrictedPlane } from '../../../wiring/restricted-plane.js';
import { request } from '../http-request.js';

export interface TestRestrictedPlane {
  readonly plane: RestrictedPlane;
  readonly url: string;
  /** Every log line written so far (JSON text). */
  readonly logs: string[];
}

export async function startTestRestrictedPlane(
  t: ExecutionContext,
  env: Record<string, string>,
): Promise<TestRestrictedPlane> {
  const config = loadConfig(env);
  const restricted = loadRestrictedMode(env, config)!;
  const logs: string[] = [];
  const logger = pino(
    { level: 'debug', redact: { paths: REDACT_PATHS, censor: '[redacted]' } },
    { write: (line: string) => void logs.push(line) },
  );
  const plane = await startRestrictedPlane(config, restricted, logger);
  t.teardown(() => plane.close());
  return { plane, url: plane.url, logs };
}

/** Exchanges a workflow identity token for a workload token. */
export async function exchangeIdentity(url: string, idToken: string): Promise<string> {
  const answer = await request(`${url}/api/v1/fleet/external-admission/token`, { method: 'POST', json: { idToken } });
  if (answer.status !== 201) throw new Error(`exchange failed: ${answer.status} ${answer.text}`);
  return answer.body.token as string;
}

/** One admission call: bearer, Idempotency-Key and JSON body. */
export function admission(
  url: string,
  app: string,
  step: string,
  options: { token: string; key?: string; json?: unknown; method?: string },
) {
  return request(`${url}/api/v1/apps/${app}/external-deployments${step === '' ? '' : `/${step}`}`, {
    method: options.method ?? 'POST',
    headers: {
      authorization: `Bearer ${options.token}`,
      ...(options.key === undefined ? {} : { 'idempotency-key': options.key }),
    },
    ...(options.json === undefined ? {} : { json: options.json }),
  });
}
