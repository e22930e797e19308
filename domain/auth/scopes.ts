/**
 * Who is calling the control plane, and what a caller may do: scopes and principals.
 *
 * The static control token (SVC_API_TOKEN) and a validated edge access identity are administrators:
 * they hold every scope but `fleet:external-admission`, which only a workflow identity exchange may
 * grant. Scoped access tokens hold exactly the scopes they were issued with.
 */

/** The named scopes. */
export const Scope = {
  /** The live event stream (`WS /api/v1/events`, alias `/ws`). */
  eventsRead: 'events:read',
  /** `/metrics`, `/api/metrics` and the service manifest when explicit auth is required. */
  metricsRead: 'metrics:read',
  /** App logs (`GET /api/v1/apps/{id}/logs`, follow included). */
  logsRead: 'logs:read',
  /** Exec sessions and compatibility exec into app processes (sessions also consume a device-key step-up). */
  appsExec: 'apps:exec',
  /** External admission; obtained only by exchanging a git-host workflow identity. */
  fleetExternalAdmission: 'fleet:external-admission',
} as const;
export type Scope = (typeof Scope)[keyof typeof Scope];

/** Scopes `POST /api/access/tokens` issues, and why the others are refused. */
export const ISSUABLE_SCOPES: readonly Scope[] = [Scope.eventsRead, Scope.metricsRead, Scope.logsRead, Scope.appsExec];
export const NOT_ISSUABLE: Readonly<Record<string, string>> = {
  [Scope.fleetExternalAdmission]:
    'this scope is obtained only by exchanging a git-host workflow identity, never issued here',
};

/** The authenticated caller of a request. */
export type Principal =
  | { readonly kind: 'control-token' }
  | { readonly kind: 'edge-identity'; readonly subject: string; readonly email: string | undefined }
  | {
      readonly kind: 'scoped-token';
      readonly tokenId: string;
      readonly name: string;
      readonly scopes: readonly Scope[];
    }
  /** A workflow identity exchanged for `fleet:external-admission` (restricted mode): the run it was issued to. */
  | {
      readonly kind: 'workload-identity';
      readonly tokenId: string;
      readonly repository: string;
      readonly runId: string;
      readonly runAttempt: string;
      readonly workflowRef: string;
      readonly ref: string;
      readonly sha: string;
      readonly scopes: readonly Scope[];
    };

/** True when `principal` may act with `scope`. */
export function grants(principal: Principal | undefined, scope: Scope): boolean {
  if (principal === undefined) return false;
  if (principal.kind === 'scoped-token' || principal.kind === 'workload-identity')
    return principal.scopes.includes(scope);
  return scope !== Scope.fleetExternalAdmission;
}

/** True for administrators (every route, including token issuance). */
export function isAdministrator(principal: Principal | undefined): boolean {
  return principal !== undefined && (principal.kind === 'control-token' || principal.kind === 'edge-identity');
}

/** Prefix of issued tokens, so a leaked one is recognizable (secret scanners, logs). */
export const ACCESS_TOKEN_PREFIX = 'svc_pat_';
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

/** A new token secret: the prefix and 32 base-32 characters (160 random bits) from `randomBytes`. */
export function newAccessTokenSecret(randomBytes: (size: number) => Uint8Array): string {
  const bytes = randomBytes(32);
  let text = ACCESS_TOKEN_PREFIX;
  for (const byte of bytes) text += ALPHABET[byte & 31];
  return text;
}
