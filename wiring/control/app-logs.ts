/**
 * The app logs of the control plane (ADR 0165): the store every allocation's output is kept in,
 * per app within size and age bounds, and the service the logs routes read and follow it through.
 */
import type { SvcConfig } from '../../platform/config.js';
import type { Logger } from '../../platform/logger.js';
import { LogStore, logStoreFile } from '../../store/logs/log-store.js';
import { getApp } from '../../store/control/apps.js';
import type { Db } from '../../store/database.js';
import { LogService } from '../../controllers/logs/log-service.js';

/** The log service and its store. */
export interface AppLogs {
  /** The service: a sink of allocations' output for the scheduler, and the reads of the routes. */
  readonly service: LogService;
  /** Closes the service, then its store. */
  close(): void;
}

/** Opens the log store in the data folder and builds its service. */
export function openAppLogs(
  config: Pick<SvcConfig, 'dataDir' | 'logsMaxBytesPerApp' | 'logsMaxAgeMs'>,
  db: Db,
  log: Logger,
): AppLogs {
  const logStore = new LogStore({
    file: logStoreFile(config.dataDir),
    maxBytesPerApp: config.logsMaxBytesPerApp,
    maxAgeMs: config.logsMaxAgeMs,
  });
  const logs = new LogService({
    store: logStore,
    appExists: (app) => getApp(db, app) !== undefined,
    logger: log.child({ component: 'logs' }),
  });
  return {
    service: logs,
    close() {
      logs.close();
      logStore.close();
    },
  };
}
