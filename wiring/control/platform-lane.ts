/**
 * The platform lane of the control plane (ADR 0086): its service, and the host agent that runs the
 * lane's work in its own process, started when work is queued.
 */
import type { SvcConfig } from '../../platform/config.js';
import { packageRoot, releaseFolder } from '../../platform/build-info.js';
import { launchAgent } from '../../platform/platform-lane/index.js';
import { PlatformLaneService } from '../../controllers/platform/index.js';
import { listOperations } from '../../store/control/operations/operations.js';
import type { Db } from '../../store/database.js';

/** The lane service, and the start of an agent for lane work left from before this start. */
export interface PlatformLaneWiring {
  readonly service: PlatformLaneService;
  /** Starts an agent when lane work was queued or interrupted before this start. */
  resumeQueuedWork(): void;
}

/** Builds the lane service; with `SVC_AGENT=auto` it starts the host agent on demand. */
export function wirePlatformLane(
  config: Pick<SvcConfig, 'agentMode' | 'platformDir' | 'dataDir' | 'releaseFetchHook'>,
  db: Db,
): PlatformLaneWiring {
  // The host agent runs the platform lane in its own process (ADR 0086); started when work is queued.
  const ensureAgent =
    config.agentMode === 'auto'
      ? () =>
          launchAgent({
            platformDir: config.platformDir,
            releaseDir: releaseFolder() ?? packageRoot(),
            dataDir: config.dataDir,
            cwd: process.cwd(),
            env: { ...process.env, SVC_DATA_DIR: config.dataDir, SVC_PLATFORM_DIR: config.platformDir },
          })
      : () => undefined;
  const service = new PlatformLaneService(db, ensureAgent, {
    fetchHookConfigured: config.releaseFetchHook !== undefined,
  });
  return {
    service,
    resumeQueuedWork() {
      // Lane work queued or interrupted before this start needs an agent.
      if (
        listOperations(db, { status: ['queued', 'running'], limit: 500 }).some((op) => op.kind.startsWith('platform.'))
      )
        ensureAgent();
    },
  };
}
