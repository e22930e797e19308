/**
 * What the admission bridge may admit: the configured app, environment, namespace and catalog entry,
 * and the live git-host checks of the installation and the admitted commit.
 */
import { NotFoundError, UnprocessableError } from '../../domain/errors.js';
import type { LogicalIdentity } from '../../domain/fleet/admission-identity.js';
import type { GitHostVerifier } from '../../domain/fleet/git-host-port.js';
import type { AdmissionBindings } from '../../domain/fleet/receipt-v4.js';

/** What the bridge is configured to admit. */
export interface BridgeSettings extends AdmissionBindings {
  readonly environment: string;
  readonly repositoryIds: readonly string[];
  readonly catalog: { readonly image: string; readonly repository: string };
}

/** The logical identity, when the bridge admits it for `app`. */
export function allowedIdentity(s: BridgeSettings, app: string, identity: LogicalIdentity): LogicalIdentity {
  if (app !== s.app)
    throw new NotFoundError(`app ${app} is not the external admission app`, {
      code: 'app_not_found',
      details: { app },
    });
  const broken: string[] = [];
  if (identity.candidate.app !== app) broken.push('candidate.app must be the app of the path');
  if (identity.candidate.environment !== s.environment) broken.push(`candidate.environment must be ${s.environment}`);
  if (identity.plan.namespace !== s.namespace) broken.push(`plan.namespace must be ${s.namespace}`);
  if (identity.source.repository !== s.catalog.repository)
    broken.push("source.repository must be the catalog app's canonical source");
  if (identity.artifact.image !== s.catalog.image) broken.push("artifact.image must be the catalog app's pinned image");
  if (broken.length > 0)
    throw new UnprocessableError(`the logical identity is not admissible: ${broken.join('; ')}`, {
      code: 'admission_not_allowed',
      details: { rules: broken },
    });
  return identity;
}

/** The git-host checks: the installation reaches exactly the configured repositories, and the admitted commit exists. */
export async function liveVerification(
  gitHost: GitHostVerifier,
  settings: BridgeSettings,
  identity: LogicalIdentity,
): Promise<void> {
  const repositories = await gitHost.installationRepositories();
  const ids = new Set(repositories.map((r) => r.id));
  const expected = new Set(settings.repositoryIds);
  if (ids.size !== expected.size || [...expected].some((id) => !ids.has(id))) {
    throw new UnprocessableError(
      'live verification failed: the verifier app installation does not reach exactly the configured repositories',
      { code: 'live_verification_failed', details: { check: 'installation_repositories' } },
    );
  }
  if (!repositories.some((r) => r.fullName === identity.source.repository))
    throw new UnprocessableError(
      'live verification failed: the admitted source repository is not one of the installation repositories',
      { code: 'live_verification_failed', details: { check: 'source_repository' } },
    );
  if (!(await gitHost.commitExists(identity.source.repository, identity.source.sha)))
    throw new UnprocessableError(
      'live verification failed: the admitted commit does not exist in the source repository',
      { code: 'live_verification_failed', details: { check: 'source_commit' } },
    );
}
