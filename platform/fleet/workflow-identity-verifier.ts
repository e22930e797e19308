/**
 * Verifies git-host workflow identity tokens (OIDC JWTs) against the issuer's fixed key-set
 * endpoint (the {@link WorkflowIdentityVerifier} port): signature (RS256/ES256), issuer, audience
 * and expiry by jose; the key set is fetched with the fleet's trusted CAs and cached by jose.
 */
import { Agent, fetch as undiciFetch } from 'undici';
import { createRemoteJWKSet, customFetch, jwtVerify, errors as joseErrors } from 'jose';
import { UnauthorizedError, UnavailableError } from '../../domain/errors.js';
import type { WorkflowIdentity, WorkflowIdentityVerifier } from '../../domain/fleet/workflow-identity.js';

/** Options of {@link OidcWorkflowIdentityVerifier}. */
export interface WorkflowIdentityVerifierOptions {
  readonly issuer: string;
  readonly jwksUrl: string;
  readonly audience: string;
  readonly ca?: string;
}

const claim = (payload: Record<string, unknown>, name: string): string => {
  const value = payload[name];
  if (typeof value !== 'string' && typeof value !== 'number')
    throw new UnauthorizedError(`the workflow identity has no ${name} claim`, { code: 'invalid_workflow_identity' });
  return String(value);
};

export class OidcWorkflowIdentityVerifier implements WorkflowIdentityVerifier {
  readonly #options: WorkflowIdentityVerifierOptions;
  readonly #keys: ReturnType<typeof createRemoteJWKSet>;

  constructor(options: WorkflowIdentityVerifierOptions) {
    this.#options = options;
    const dispatcher = options.ca === undefined ? undefined : new Agent({ connect: { ca: options.ca } });
    this.#keys = createRemoteJWKSet(new URL(options.jwksUrl), {
      ...(dispatcher === undefined
        ? {}
        : {
            [customFetch]: ((url: string, init: RequestInit) =>
              undiciFetch(url, { ...(init as object), dispatcher })) as unknown as typeof fetch,
          }),
    });
  }

  async verify(token: string): Promise<WorkflowIdentity> {
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, this.#keys, {
        issuer: this.#options.issuer,
        audience: this.#options.audience,
        algorithms: ['RS256', 'ES256'],
        clockTolerance: 30,
      }));
    } catch (error) {
      if (
        error instanceof joseErrors.JOSEError &&
        !(error instanceof joseErrors.JWKSTimeout) &&
        error.code !== 'ERR_JOSE_GENERIC'
      ) {
        throw new UnauthorizedError(`the workflow identity token is not valid (${error.code})`, {
          code: 'invalid_workflow_identity',
        });
      }
      throw new UnavailableError('the workflow identity key set cannot be read', {
        code: 'oidc_keys_unavailable',
        retryAfterSeconds: 5,
      });
    }
    return {
      repository: claim(payload, 'repository'),
      repositoryId: claim(payload, 'repository_id'),
      workflowRef: claim(payload, 'job_workflow_ref'),
      ref: claim(payload, 'ref'),
      environment: claim(payload, 'environment'),
      sha: claim(payload, 'sha'),
      runId: claim(payload, 'run_id'),
      runAttempt: claim(payload, 'run_attempt'),
      audience: Array.isArray(payload.aud) ? String(payload.aud[0]) : String(payload.aud),
      expiresAt: new Date(Number(payload.exp) * 1000),
    };
  }
}
