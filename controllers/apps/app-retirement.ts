/**
 * App retirement (ADR 0191): a deleted app's system user and files are removed once a grace period
 * has passed since the platform first saw it deleted, unless its volumes hold data (then user and
 * data stay, and `svc doctor` lists them). Only apps this data folder has a data folder for are
 * touched: `svc-app-*` users it knows nothing of (another install's, or left by tests) are listed by
 * `svc doctor`, never removed.
 */
import type { Logger } from '../../platform/logger.js';
import type { Db } from '../../store/database.js';
import { listApps } from '../../store/control/apps.js';
import type { AppIdentities } from '../../platform/local-scheduler/index.js';
import {
  appDataFolders,
  readRetiredApps,
  removeAppLeftovers,
  volumesHoldData,
  writeRetiredApps,
} from '../../platform/local-scheduler/isolation/app-leftovers.js';

export interface AppRetirementOptions {
  readonly db: Db;
  /** The local driver's data folder (the one holding `app-data/`). */
  readonly dataDir: string;
  /** Time after deletion before removal; 0 never removes. */
  readonly graceMs: number;
  /** The driver's identities: a removed user is forgotten, so a new app of that name gets a new one. */
  readonly identities?: AppIdentities;
  readonly logger: Logger;
  /** Removes a retired app's containers and images (ADR 0219); undefined: it has none. */
  readonly removeImages?: (app: string) => Promise<unknown>;
  /** @default hourly */
  readonly intervalMs?: number;
  readonly now?: () => Date;
}

/** What one sweep did. */
export interface RetirementSweep {
  /** Apps whose user and files were removed. */
  readonly removed: readonly string[];
  /** Deleted apps kept because their volumes hold data. */
  readonly kept: readonly string[];
  /** Deleted apps inside their grace period (or kept for good when the grace is off). */
  readonly pending: readonly string[];
}

export class AppRetirement {
  readonly #options: AppRetirementOptions;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<RetirementSweep> | undefined;
  readonly #keptLogged = new Set<string>();

  constructor(options: AppRetirementOptions) {
    this.#options = options;
  }

  /** Sweeps a minute after start (or after the interval, when shorter), then every interval. */
  start(): void {
    const every = this.#options.intervalMs ?? 3_600_000;
    const run = (): void => {
      this.sweep().catch((error: unknown) => this.#options.logger.warn({ err: error }, 'app retirement sweep failed'));
      this.#timer = setTimeout(run, every);
      this.#timer.unref();
    };
    this.#timer = setTimeout(run, Math.min(60_000, every));
    this.#timer.unref();
  }

  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** One pass: records newly deleted apps, removes those past their grace. One pass at a time. */
  sweep(): Promise<RetirementSweep> {
    this.#running ??= this.#sweep().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #sweep(): Promise<RetirementSweep> {
    const { db, dataDir, graceMs, logger } = this.#options;
    const now = (this.#options.now ?? (() => new Date()))();
    const live = new Set(listApps(db).map((a) => a.name));
    const before = readRetiredApps(dataDir);
    const retired = { ...before };
    const removed: string[] = [];
    const kept: string[] = [];
    const pending: string[] = [];
    const folders = appDataFolders(dataDir);
    for (const app of Object.keys(retired)) if (live.has(app) || !folders.includes(app)) delete retired[app];
    for (const app of folders) {
      if (live.has(app)) continue;
      retired[app] ??= now.toISOString();
      if (graceMs === 0 || now.getTime() - Date.parse(retired[app]) < graceMs) {
        pending.push(app);
        continue;
      }
      if (volumesHoldData(dataDir, app)) {
        kept.push(app);
        if (!this.#keptLogged.has(app)) {
          this.#keptLogged.add(app);
          logger.info({ app }, 'deleted app kept: its volumes hold data (remove them to let its user and files go)');
        }
        continue;
      }
      try {
        this.#options.identities?.forget(app);
        await this.#options.removeImages?.(app);
        const user = await removeAppLeftovers(dataDir, app);
        delete retired[app];
        removed.push(app);
        logger.info(
          { app, user },
          `deleted app retired: its system user${this.#options.removeImages ? ', images' : ''} and files are removed`,
        );
      } catch (error) {
        logger.warn({ err: error, app }, 'deleted app not retired yet (a process may still run as its user)');
      }
    }
    if (JSON.stringify(retired) !== JSON.stringify(before)) writeRetiredApps(dataDir, retired);
    return { removed, kept, pending };
  }
}
