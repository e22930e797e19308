/**
 * The edge identity of a control plane: the principal of a request the edge's access service
 * signed an assertion for, when `SVC_EDGE_ACCESS_TEAM_DOMAIN` and `SVC_EDGE_ACCESS_AUD` are set.
 */
import { edgeIdentityPrincipal } from '../../api/control/auth/auth.js';
import { edgeIdentityVerifier } from '../../platform/edge/index.js';
import type { SvcConfig } from '../../platform/config.js';
import type { Logger } from '../../platform/logger.js';

/** The edge identity principal, or undefined when the edge's access service is not configured. */
export function edgeIdentityOf(
  config: Pick<SvcConfig, 'edgeAccessTeamDomain' | 'edgeAccessAud' | 'edgeAccessCertsUrl'>,
  log: Logger,
): ReturnType<typeof edgeIdentityPrincipal> | undefined {
  return config.edgeAccessTeamDomain !== undefined && config.edgeAccessAud !== undefined
    ? edgeIdentityPrincipal(
        edgeIdentityVerifier({
          teamDomain: config.edgeAccessTeamDomain,
          audience: config.edgeAccessAud,
          ...(config.edgeAccessCertsUrl === undefined ? {} : { certsUrl: config.edgeAccessCertsUrl }),
          logger: log.child({ component: 'edge-access' }),
        }),
      )
    : undefined;
}
