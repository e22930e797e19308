/**
 * Event surface test harness: a fresh control.db and an event services on a manual clock.
 */
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import { openControlStore } from '../../store/open-stores.js';
import { silentLogger } from '../../platform/logger.js';
import { ControlMetrics } from '../../platform/metrics/control-metrics.js';
import { ManualClock } from '../../domain/events/clock.js';
import {
  startEventServices,
  type EventServices,
  type EventServicesOptions,
} from '../../wiring/control/event-services.js';
import type { Db } from '../../store/database.js';
import { tempDir } from '../helpers/temp-dir.js';

/** Event services on a manual clock over a temp control.db, closed in teardown. */
export async function eventServices(
  t: ExecutionContext,
  options: Partial<EventServicesOptions> = {},
): Promise<{ surface: EventServices; clock: ManualClock; db: Db; metrics: ControlMetrics; dataDir: string }> {
  const dataDir = path.join(tempDir(t), 'data');
  const store = openControlStore(dataDir);
  const clock = (options.clock as ManualClock | undefined) ?? new ManualClock();
  const metrics = new ControlMetrics();
  const surface = await startEventServices({
    db: store.db,
    logger: silentLogger(),
    metrics,
    clock,
    source: 'svc-control-plane',
    environment: 'test',
    sink: undefined,
    outbound: { allowPrivate: true },
    ...options,
  });
  t.teardown(async () => {
    await surface.close();
    await surface.events.close();
    store.db.close();
  });
  return { surface, clock, db: store.db, metrics, dataDir };
}
