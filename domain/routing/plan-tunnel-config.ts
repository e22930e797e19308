/**
 * Planning the tunnel config file: the observed file plus the desired rules give the file to write
 * and what changed. Rules that stay keep their place; new rules go before the catch-all, which is last.
 */
import { CATCH_ALL_RULE, isCatchAll, type IngressRule, type TunnelConfig } from './tunnel-config.js';

/** What the file should say besides its rules. */
export interface TunnelIdentity {
  readonly tunnel: string;
  readonly credentialsFile: string;
}

/** The planned file and the difference to the observed one. */
export interface TunnelConfigPlan {
  readonly config: TunnelConfig;
  /** False when the observed file already equals the planned one: nothing is written. */
  readonly changed: boolean;
  readonly added: readonly string[];
  readonly removed: readonly string[];
  /** Hostnames whose service changed. */
  readonly updated: readonly string[];
  /** True when the observed file had drift other than rule changes (order, catch-all, fields, duplicates). */
  readonly repaired: boolean;
}

/**
 * Plans the file: observed rules that are still desired keep their order (with the desired
 * service), removed ones go, new ones are appended in the order given, and one catch-all
 * `http_status:404` ends the list. `observed` is undefined when there is no file yet.
 */
export function planTunnelConfig(
  observed: TunnelConfig | undefined,
  desired: readonly IngressRule[],
  identity: TunnelIdentity,
): TunnelConfigPlan {
  const wanted = new Map<string, string>();
  for (const rule of desired)
    if (!isCatchAll(rule) && !wanted.has(rule.hostname!)) wanted.set(rule.hostname!, rule.service);
  const ingress: IngressRule[] = [];
  const seen = new Set<string>();
  const removed: string[] = [];
  const updated: string[] = [];
  for (const rule of observed?.ingress ?? []) {
    if (isCatchAll(rule)) continue;
    const hostname = rule.hostname!;
    if (seen.has(hostname)) continue;
    const service = wanted.get(hostname);
    if (service === undefined) {
      removed.push(hostname);
      continue;
    }
    if (service !== rule.service) updated.push(hostname);
    seen.add(hostname);
    ingress.push({ hostname, service });
  }
  const added: string[] = [];
  for (const [hostname, service] of wanted) {
    if (seen.has(hostname)) continue;
    added.push(hostname);
    ingress.push({ hostname, service });
  }
  ingress.push({ ...CATCH_ALL_RULE });
  const config: TunnelConfig = { tunnel: identity.tunnel, 'credentials-file': identity.credentialsFile, ingress };
  const changed = observed === undefined || !sameConfig(observed, config);
  return {
    config,
    changed,
    added,
    removed,
    updated,
    repaired: changed && added.length + removed.length + updated.length === 0,
  };
}

/** True when both configs say exactly the same (fields and rule order). */
export function sameConfig(a: TunnelConfig, b: TunnelConfig): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(config: TunnelConfig): unknown {
  const extra = Object.keys(config)
    .filter((k) => !['tunnel', 'credentials-file', 'ingress'].includes(k))
    .sort();
  return {
    tunnel: config.tunnel,
    credentialsFile: config['credentials-file'],
    extra,
    ingress: config.ingress.map((r) => ({
      keys: Object.keys(r).sort().join(','),
      hostname: r.hostname ?? null,
      service: r.service,
    })),
  };
}
