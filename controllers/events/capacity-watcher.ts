/**
 * Host capacity watcher: "minimum capacity" means free memory of the host and free disk of the
 * data folder's filesystem are at or above configured minimums. Below either, it emits one
 * service.capacity.below_minimum per episode and missing-capacity snapshot; back above both, one
 * service.capacity.recovered per episode. Local episode state is committed or removed only after
 * the event services accepted the event.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../../store/database.js';
import type { Logger } from '../../platform/logger.js';
import type { EventEmitterPort } from '../../domain/events/event-port.js';
import type { Clock } from '../../domain/events/clock.js';
import { CorrelationKey } from '../../domain/events/correlation.js';
import { deleteMeta, readMeta, writeMeta } from '../../store/control/event-meta.js';
import { openLegacyCapacityWarnings } from '../../store/control/events.js';

/** What the host has free now. */
export interface CapacitySample {
  readonly freeMemoryBytes: number;
  readonly freeDiskBytes: number;
  /** Size of the data folder's file system, when known. */
  readonly totalDiskBytes?: number;
}

/** Minimums below which the host is short of capacity. */
export interface CapacityMinimums {
  readonly memoryBytes: number;
  readonly diskBytes: number;
}

interface EpisodeState {
  readonly episode: string;
  readonly snapshotHash: string;
  readonly missing: readonly string[];
}

const STATE_KEY = 'events.capacity-episode';

/** Which resources are short: the missing-capacity snapshot (amounts excluded, so it is stable). */
export function missingCapacity(sample: CapacitySample, min: CapacityMinimums): string[] {
  const missing: string[] = [];
  if (sample.freeMemoryBytes < min.memoryBytes) missing.push('memory');
  if (sample.freeDiskBytes < min.diskBytes) missing.push('disk');
  return missing;
}

/** Checks host capacity against the minimums. */
export class CapacityWatcher {
  constructor(
    private readonly options: {
      db: Db;
      events: EventEmitterPort;
      clock: Clock;
      logger: Logger;
      hostId: string;
      minimums: CapacityMinimums;
      probe: () => Promise<CapacitySample>;
      /** Source of the platform's events (legacy warnings are adopted only from it). */
      source: string;
      /** SVC_EVENT_ENVIRONMENT as configured (undefined when unset): legacy adoption needs it. */
      eventEnvironment: string | undefined;
    },
  ) {}

  /**
   * The legacy warning this recovery may adopt: exactly one open legacy warning of this source in
   * the configured event environment whose snapshot matches the retained one. `retry` when legacy
   * warnings exist but SVC_EVENT_ENVIRONMENT is not configured.
   */
  private legacyAdoption(state: EpisodeState): { id?: string; retry: boolean } {
    const legacy = openLegacyCapacityWarnings(this.options.db, this.options.source, this.options.clock.now());
    if (legacy.length === 0) return { retry: false };
    if (this.options.eventEnvironment === undefined) return { retry: true };
    const same = (missing: unknown) =>
      Array.isArray(missing) && [...(missing as string[])].sort().join(',') === [...state.missing].sort().join(',');
    const matches = legacy.filter(
      (w) =>
        w.environment === this.options.eventEnvironment &&
        (w.metadata.snapshotHash === state.snapshotHash || same(w.metadata.missing)),
    );
    return { id: matches.length === 1 ? matches[0]!.id : undefined, retry: false };
  }

  private state(): EpisodeState | undefined {
    const raw = readMeta(this.options.db, STATE_KEY);
    return raw === undefined ? undefined : (JSON.parse(raw) as EpisodeState);
  }

  /** One check; returns what it emitted. */
  async check(): Promise<'warning' | 'recovered' | 'none'> {
    const sample = await this.options.probe();
    const missing = missingCapacity(sample, this.options.minimums);
    const state = this.state();
    const key = CorrelationKey.capacity(this.options.hostId);
    const at = new Date(this.options.clock.now()).toISOString();
    const details = {
      freeMemoryBytes: sample.freeMemoryBytes,
      freeDiskBytes: sample.freeDiskBytes,
      minMemoryBytes: this.options.minimums.memoryBytes,
      minDiskBytes: this.options.minimums.diskBytes,
    };
    if (missing.length > 0) {
      const snapshotHash = createHash('sha256').update(missing.join(',')).digest('hex').slice(0, 12);
      if (state?.snapshotHash === snapshotHash) return 'none';
      const episode = state?.episode ?? randomBytes(6).toString('hex');
      await this.options.events.emit({
        type: 'service.capacity.below_minimum',
        severity: 'warning',
        title: `Host ${this.options.hostId} is below minimum capacity (${missing.join(', ')})`,
        body: `Free memory ${sample.freeMemoryBytes} bytes (minimum ${this.options.minimums.memoryBytes}); free disk ${sample.freeDiskBytes} bytes (minimum ${this.options.minimums.diskBytes})`,
        dedupeKey: `capacity:${episode}:${snapshotHash}`,
        metadata: {
          correlationKey: key,
          hostId: this.options.hostId,
          missing,
          snapshotHash,
          ...details,
          previousState: state ? 'below_minimum' : 'ok',
        },
      });
      writeMeta(
        this.options.db,
        STATE_KEY,
        JSON.stringify({ episode, snapshotHash, missing } satisfies EpisodeState),
        at,
      );
      return 'warning';
    }
    if (state === undefined) return 'none';
    const adoption = this.legacyAdoption(state);
    if (adoption.retry) {
      this.options.logger.warn(
        { hostId: this.options.hostId },
        'capacity recovered but legacy warnings exist and SVC_EVENT_ENVIRONMENT is not set: recovery deferred',
      );
      return 'none';
    }
    await this.options.events.emit({
      type: 'service.capacity.recovered',
      severity: 'info',
      title: `Host ${this.options.hostId} capacity recovered`,
      body: `Free memory and disk are above their minimums again (was short of ${state.missing.join(', ')})`,
      dedupeKey: `capacity:${state.episode}:recovered`,
      metadata: {
        correlationKey: key,
        hostId: this.options.hostId,
        ...details,
        previousState: 'below_minimum',
        previousEventType: 'service.capacity.below_minimum',
        ...(adoption.id !== undefined ? { legacyCapacityWarningID: adoption.id } : {}),
      },
    });
    deleteMeta(this.options.db, STATE_KEY);
    return 'recovered';
  }
}
