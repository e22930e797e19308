/**
 * Auth hints: a descriptive, secret-safe account of how callers authenticate to this control
 * plane — which mechanisms are configured, which routes are public, how to pass a token. It is
 * built from facts that are booleans and route lists only, so it cannot hold a secret value.
 */

/** Secret-free facts about the authentication configuration. */
export interface AuthFacts {
  readonly profile: string;
  readonly apiTokenConfigured: boolean;
  readonly requireExplicitAuth: boolean;
  readonly webhookSecretConfigured: boolean;
  readonly logpushTokenConfigured: boolean;
  /** True when this build serves scoped access tokens (`POST /api/access/tokens`). */
  readonly scopedTokensServed: boolean;
  /** Edge access identity settings: undefined when this build does not support them. */
  readonly edgeIdentityConfigured: boolean | undefined;
  /** Every advertised route (`METHOD /path`) with whether it is public. */
  readonly routes: readonly { readonly route: string; readonly public: boolean }[];
  /** Routes that need a caller only when SVC_REQUIRE_EXPLICIT_AUTH=true. */
  readonly explicitOnlyRoutes: readonly string[];
}

/** One authentication mechanism. */
export interface AuthMechanism {
  readonly id: string;
  readonly configured: boolean;
  readonly variable: string | null;
  readonly howToPass: string;
  readonly example: string | null;
  readonly grants: string;
}

/** The auth hints view. */
export interface AuthHints {
  /** `open`: no mechanism configured, anyone who reaches the API may call it. */
  readonly mode: 'open' | 'protected';
  readonly profile: string;
  readonly mechanisms: readonly AuthMechanism[];
  readonly routes: {
    readonly public: readonly string[];
    readonly explicitAuthOnly: { readonly requireExplicitAuth: boolean; readonly routes: readonly string[] };
    readonly protectedCount: number;
  };
  readonly hints: readonly string[];
}

/** Builds the hints from `facts`. */
export function authHints(facts: AuthFacts): AuthHints {
  const protectedOn = facts.apiTokenConfigured || facts.requireExplicitAuth || facts.edgeIdentityConfigured === true;
  const mechanisms: AuthMechanism[] = [
    {
      id: 'control-token',
      configured: facts.apiTokenConfigured,
      variable: 'SVC_API_TOKEN',
      howToPass: 'Authorization: Bearer <token>',
      example: 'curl -H "Authorization: Bearer $SVC_API_TOKEN" <base_url>/api/operator/inbox',
      grants: 'every protected route (administrator)',
    },
  ];
  if (facts.scopedTokensServed) {
    mechanisms.push({
      id: 'scoped-token',
      configured: true,
      variable: null,
      howToPass: 'Authorization: Bearer <issued token>',
      example: 'POST /api/access/tokens with the control token issues one; it is shown once',
      grants: 'only the routes its scopes name (for example events:read, metrics:read)',
    });
  }
  if (facts.edgeIdentityConfigured !== undefined) {
    mechanisms.push({
      id: 'edge-access-identity',
      configured: facts.edgeIdentityConfigured,
      variable: 'SVC_EDGE_ACCESS_TEAM_DOMAIN, SVC_EDGE_ACCESS_AUD',
      howToPass: 'Edge-Access-Jwt-Assertion: <JWT set by the edge>',
      example: null,
      grants: 'administrator, when the assertion validates; an unvalidated header grants nothing',
    });
  }
  mechanisms.push(
    {
      id: 'webhook-signature',
      configured: facts.webhookSecretConfigured,
      variable: 'SVC_WEBHOOK_SECRET',
      howToPass: 'X-Hub-Signature-256: sha256=<HMAC-SHA-256 of the body>',
      example: null,
      grants: 'POST /api/webhooks/* only; unset, every delivery is recorded and refused',
    },
    {
      id: 'logpush-secret',
      configured: facts.logpushTokenConfigured,
      variable: 'SVC_EDGE_LOGPUSH_TOKEN',
      howToPass: 'X-Svc-Logpush-Token: <secret> (also X-Edge-Log-Secret or Authorization: Bearer), HTTPS only',
      example: null,
      grants: 'POST /api/access/edge/logpush only; unset, the receiver refuses',
    },
    {
      id: 'event-stream',
      configured: protectedOn,
      variable: null,
      howToPass: 'Authorization: Bearer <token> on the WebSocket upgrade of /api/v1/events or /ws',
      example: null,
      grants: 'needs scope events:read (the control token carries it) whenever authentication is on',
    },
  );
  const publicRoutes = facts.routes.filter((r) => r.public).map((r) => r.route);
  const hints: string[] = [];
  if (!protectedOn)
    hints.push(
      'No authentication is configured: the API is open to anyone who can reach it. Set SVC_API_TOKEN (development only without it).',
    );
  if (facts.profile === 'production' && !facts.requireExplicitAuth)
    hints.push('The production profile requires SVC_REQUIRE_EXPLICIT_AUTH=true.');
  if (!facts.requireExplicitAuth)
    hints.push(
      `Metrics and the service manifest are open for local scraping; SVC_REQUIRE_EXPLICIT_AUTH=true protects them.`,
    );
  hints.push('A 401 from a protected route says nothing about platform health.');
  hints.push('Give scrapers and scripts a token through a protected file, never in a checked-in config.');
  return {
    mode: protectedOn ? 'protected' : 'open',
    profile: facts.profile,
    mechanisms,
    routes: {
      public: publicRoutes,
      explicitAuthOnly: { requireExplicitAuth: facts.requireExplicitAuth, routes: facts.explicitOnlyRoutes },
      protectedCount: facts.routes.filter((r) => !r.public && !facts.explicitOnlyRoutes.includes(r.route)).length,
    },
    hints,
  };
}
