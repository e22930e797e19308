/**
 * Exec (ADR 0168, 0169): the sessions service over the local driver's exec adapter, the device-key
 * step-up, their routes, and the attach socket once the listener is up.
 */
import type Router from '@koa/router';
import type { SvcConfig } from '../../platform/config.js';
import type { Logger } from '../../platform/logger.js';
import type { Db } from '../../store/database.js';
import type { Principal } from '../../domain/auth/index.js';
import type { EventEmitterPort } from '../../domain/events/event-port.js';
import { LocalExec } from '../../platform/exec/index.js';
import type { ExecPort } from '../../domain/exec/exec-port.js';
import { ExecSessions } from '../../controllers/exec/exec-sessions.js';
import { ExecStepUp } from '../../controllers/exec/step-up.js';
import { DeviceEnrollments } from '../../controllers/exec/device-enrollments.js';
import { deviceRoutes } from '../../api/control/exec/device-routes.js';
import type { SchedulerTargets } from '../../controllers/apps/scheduler-targets.js';
import { execRoutes } from '../../api/control/exec/exec-routes.js';
import { attachExecSocket } from '../../api/control/exec/exec-socket.js';
import type { EdgeIdentityCheck } from '../../api/control/auth/auth.js';
import type { RunningServer } from '../../api/http/listen.js';

export interface ExecApi {
  readonly sessions: ExecSessions;
  /** The exec routes and the device enrollment routes. */
  readonly routers: readonly Router[];
  /** Serves the attach socket on `server`; `edgeIdentity` validates an edge access identity. */
  attach(
    server: Pick<RunningServer, 'onUpgrade'>,
    scopedToken: (secret: string) => Principal | undefined,
    edgeIdentity?: EdgeIdentityCheck,
  ): void;
  close(): void;
}

/** The exec adapter of the configured driver: the engine's exec on the swarm driver (loaded only there). */
export async function execPortOf(config: Pick<SvcConfig, 'schedulerDriver' | 'swarmHost'>): Promise<ExecPort> {
  if (config.schedulerDriver !== 'swarm') return new LocalExec();
  const swarm = await import('../../platform/swarm-scheduler/index.js');
  const host = config.swarmHost ?? process.env.DOCKER_HOST;
  // A manager reached over TCP runs elsewhere: its processes are signalled through its engine, not here.
  return new swarm.EngineExec(swarm.engineAt(config.swarmHost), {
    managerLocal: host === undefined || host === '' || host.startsWith('unix://'),
  });
}

export function startExec(
  config: SvcConfig,
  parts: {
    readonly db: Db;
    readonly targets: SchedulerTargets;
    readonly events: EventEmitterPort;
    readonly logger: Logger;
    /** How commands reach a task. @default the local driver's adapter */
    readonly exec?: ExecPort;
  },
): ExecApi {
  const logger = parts.logger.child({ component: 'exec' });
  const sessions = new ExecSessions({
    db: parts.db,
    targets: parts.targets,
    exec: parts.exec ?? new LocalExec(),
    events: parts.events,
    logger,
    settings: {
      maxSessionsPerApp: config.execMaxSessionsPerApp,
      maxSessions: config.execMaxSessions,
      idleTimeoutMs: config.execIdleTimeoutMs,
      maxDurationMs: config.execMaxDurationMs,
    },
  });
  const authOn = config.apiToken !== undefined || config.requireExplicitAuth;
  const routers = [
    execRoutes(sessions, new ExecStepUp({ db: parts.db }), { authOn }),
    deviceRoutes(new DeviceEnrollments(parts.db)),
  ];
  let socket: { close(): void } | undefined;
  return {
    sessions,
    routers,
    attach(server, scopedToken, edgeIdentity) {
      socket = attachExecSocket(server, sessions, {
        apiToken: config.apiToken,
        requireExplicitAuth: config.requireExplicitAuth,
        logger,
        scopedToken,
        ...(edgeIdentity ? { edgeIdentity } : {}),
      });
    },
    close() {
      socket?.close();
      sessions.close();
    },
  };
}
