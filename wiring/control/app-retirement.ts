/**
 * The retirement of deleted apps on the local scheduler (ADR 0191): a deleted app's user and files
 * go after a grace period, unless its volumes hold data.
 */
import type { SvcConfig } from '../../platform/config.js';
import type { Logger } from '../../platform/logger.js';
import type { AppIdentities } from '../../platform/local-scheduler/index.js';
import { AppRetirement } from '../../controllers/apps/app-retirement.js';
import type { Db } from '../../store/database.js';

/** Starts the retirement of deleted apps; none with the Kubernetes driver. */
export function startAppRetirement(
  config: Pick<SvcConfig, 'schedulerDriver' | 'appRemovalGraceMs'>,
  parts: {
    readonly db: Db;
    readonly dataDir: string;
    readonly identities: AppIdentities | undefined;
    readonly logger: Logger;
    /** Removes a retired app's containers and images. */
    readonly removeImages?: (app: string) => Promise<unknown>;
  },
): AppRetirement | undefined {
  const retirement =
    config.schedulerDriver === 'local'
      ? new AppRetirement({
          db: parts.db,
          dataDir: parts.dataDir,
          graceMs: config.appRemovalGraceMs,
          ...(parts.identities ? { identities: parts.identities } : {}),
          logger: parts.logger.child({ component: 'app-retirement' }),
          ...(parts.removeImages ? { removeImages: parts.removeImages } : {}),
        })
      : undefined;
  retirement?.start();
  return retirement;
}
