/**
 * The `fleet:external-admission` scope, obtained only by exchanging a git-host workflow identity:
 * the OIDC token is verified (signature, issuer, audience carrying the intent, expiry), its
 * repository, workflow, ref and environment must equal the configured bindings exactly, and the
 * platform issues a short-lived workload token bound to that run. The secret is returned once and
 * kept as its SHA-256; neither it nor the OIDC token is logged or audited.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Scope, type Principal } from '../../domain/auth/index.js';
import { ValidationError } from '../../domain/errors.js';
import {
  checkBindings,
  type WorkflowBindings,
  type WorkflowIdentityVerifier,
} from '../../domain/fleet/workflow-identity.js';
import type { Db } from '../../store/database.js';
import {
  deleteExpiredWorkloadTokens,
  insertWorkloadToken,
  workloadTokenBySecret,
} from '../../store/control/workload-tokens.js';
import type { FleetAudit } from './fleet-audit.js';

/** Prefix of workload token secrets. */
export const WORKLOAD_TOKEN_PREFIX = 'svc_wit_';
/** Longest workload token lifetime (capped by the identity's own expiry). */
export const WORKLOAD_TOKEN_TTL_MS = 15 * 60_000;

const sha256Hex = (value: string) => createHash('sha256').update(value).digest('hex');

export class WorkloadTokens {
  constructor(
    private readonly options: {
      readonly db: Db;
      readonly verifier: WorkflowIdentityVerifier;
      readonly bindings: WorkflowBindings;
      readonly environment: string;
      readonly audit: FleetAudit;
      readonly now?: () => Date;
    },
  ) {}

  /** Exchanges a workflow identity token for a workload token; the secret is in the result only. */
  async exchange(idToken: unknown): Promise<{
    token: string;
    tokenId: string;
    scopes: string[];
    expiresAt: string;
    repository: string;
    runId: string;
  }> {
    if (typeof idToken !== 'string' || idToken.length === 0 || idToken.length > 16_384)
      throw new ValidationError('idToken: must be the workflow identity token (a JWT)', {
        code: 'invalid_request',
        details: { field: 'idToken' },
      });
    const identity = await this.options.verifier.verify(idToken);
    checkBindings(identity, this.options.bindings, this.options.environment);
    const now = this.now();
    deleteExpiredWorkloadTokens(this.options.db, now, 100);
    const expiresAt = new Date(Math.min(now.getTime() + WORKLOAD_TOKEN_TTL_MS, identity.expiresAt.getTime()));
    let token = WORKLOAD_TOKEN_PREFIX;
    for (const byte of randomBytes(32)) token += 'abcdefghijklmnopqrstuvwxyz234567'[byte & 31];
    const tokenId = `wit_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
    insertWorkloadToken(
      this.options.db,
      {
        id: tokenId,
        repository: identity.repository,
        repositoryId: identity.repositoryId,
        runId: identity.runId,
        runAttempt: identity.runAttempt,
        workflowRef: identity.workflowRef,
        ref: identity.ref,
        sha: identity.sha,
        issuedAt: now.toISOString(),
        expiresAt: expiresAt.toISOString(),
      },
      sha256Hex(token),
    );
    this.options.audit.record(`workflow:${identity.repository}`, 'workload_token.exchanged', tokenId, {
      runId: identity.runId,
      runAttempt: identity.runAttempt,
      workflowRef: identity.workflowRef,
      expiresAt: expiresAt.toISOString(),
    });
    return {
      token,
      tokenId,
      scopes: [Scope.fleetExternalAdmission],
      expiresAt: expiresAt.toISOString(),
      repository: identity.repository,
      runId: identity.runId,
    };
  }

  /** The principal of an unexpired workload token secret. */
  authenticate(secret: string): Principal | undefined {
    if (!secret.startsWith(WORKLOAD_TOKEN_PREFIX)) return undefined;
    const record = workloadTokenBySecret(this.options.db, sha256Hex(secret), this.now());
    if (record === undefined) return undefined;
    return {
      kind: 'workload-identity',
      tokenId: record.id,
      repository: record.repository,
      runId: record.runId,
      runAttempt: record.runAttempt,
      workflowRef: record.workflowRef,
      ref: record.ref,
      sha: record.sha,
      scopes: [Scope.fleetExternalAdmission],
    };
  }

  private now(): Date {
    return (this.options.now ?? (() => new Date()))();
  }
}
