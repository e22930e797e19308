/**
 * The edge tunnel config: tunnel name, credentials file and ordered ingress rules, the catch-all last.
 */

/** The service of the catch-all rule that answers every unmatched hostname. */
export const CATCH_ALL_SERVICE = 'http_status:404';

/** One ingress rule: traffic for `hostname` goes to `service`; the catch-all has no hostname. */
export interface IngressRule {
  readonly hostname?: string;
  readonly service: string;
}

/** The tunnel config file's content, in the field names of the file. */
export interface TunnelConfig {
  readonly tunnel: string;
  readonly 'credentials-file': string;
  readonly ingress: readonly IngressRule[];
}

/** The catch-all rule `{ service: http_status:404 }`. */
export const CATCH_ALL_RULE: IngressRule = Object.freeze({ service: CATCH_ALL_SERVICE });

/** True for a rule without hostname (a catch-all, whatever its service). */
export function isCatchAll(rule: IngressRule): boolean {
  return rule.hostname === undefined || rule.hostname === '';
}

/** True when `config` ends with exactly one catch-all `http_status:404` and has no other hostname-less rule. */
export function catchAllIsLast(config: TunnelConfig): boolean {
  const last = config.ingress[config.ingress.length - 1];
  return (
    last !== undefined &&
    last.service === CATCH_ALL_SERVICE &&
    isCatchAll(last) &&
    config.ingress.filter(isCatchAll).length === 1
  );
}
