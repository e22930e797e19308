/**
 * Git-host workflow identities (OIDC) and the exact bindings restricted mode accepts: repository,
 * workflow, ref, environment and intent. The `fleet:external-admission` scope is granted only by
 * exchanging such an identity; the verifier of the token's signature is a port (platform/fleet).
 */
import { ForbiddenError } from '../errors.js';

/** The claims of a verified workflow identity token that the platform uses. */
export interface WorkflowIdentity {
  readonly repository: string;
  readonly repositoryId: string;
  /** `owner/repo/.github/workflows/<file>@<ref>`. */
  readonly workflowRef: string;
  readonly ref: string;
  readonly environment: string;
  readonly sha: string;
  readonly runId: string;
  readonly runAttempt: string;
  /** The audience the token was minted for; carries the intent (ADR 0152). */
  readonly audience: string;
  readonly expiresAt: Date;
}

/** The exact bindings configured for restricted mode. */
export interface WorkflowBindings {
  readonly repository: string;
  /** Workflow file path inside the repository, e.g. `.github/workflows/admit.yml`. */
  readonly workflow: string;
  readonly ref: string;
  readonly environment: string;
  readonly intent: string;
}

/** The audience an identity must carry for `intent` in `environment`: `svc:<environment>:<intent>`. */
export function intentAudience(environment: string, intent: string): string {
  return `svc:${environment}:${intent}`;
}

/** Verifies the signature, issuer, audience and expiry of a workflow identity token. */
export interface WorkflowIdentityVerifier {
  verify(token: string): Promise<WorkflowIdentity>;
}

/** Names every binding the identity breaks (empty when it matches exactly). */
export function bindingMismatches(
  identity: WorkflowIdentity,
  bindings: WorkflowBindings,
  environment: string,
): string[] {
  const out: string[] = [];
  if (identity.repository !== bindings.repository) out.push('repository');
  if (identity.workflowRef !== `${bindings.repository}/${bindings.workflow}@${bindings.ref}`) out.push('workflow');
  if (identity.ref !== bindings.ref) out.push('ref');
  if (identity.environment !== bindings.environment) out.push('environment');
  if (identity.audience !== intentAudience(environment, bindings.intent)) out.push('intent');
  return out;
}

/** Throws a 403 naming the broken bindings (never the token). */
export function checkBindings(identity: WorkflowIdentity, bindings: WorkflowBindings, environment: string): void {
  const broken = bindingMismatches(identity, bindings, environment);
  if (broken.length > 0)
    throw new ForbiddenError(`the workflow identity does not match the configured binding(s): ${broken.join(', ')}`, {
      code: 'workflow_binding_mismatch',
      details: { bindings: broken },
    });
}
