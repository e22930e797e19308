/**
 * The knowledge store's lifecycle (features `lifecycle-retention`, `lifecycle-compaction`,
 * `lifecycle-vacuum`; docs/adr/0175): retention expires nodes of a memory type (working memory)
 * after an age, compaction removes superseded versions closed before a horizon, and VACUUM returns
 * free pages to the disk. Each is off until configured; each can be previewed and run now. Nothing
 * referenced and no current version is ever removed (the rules are in store/knowledge/lifecycle-store.ts).
 */
import { ValidationError } from '../../domain/errors.js';
import { MEM_TYPES, type MemType } from '../../domain/knowledge/modes.js';
import { LifecycleStore } from '../../store/knowledge/lifecycle-store.js';
import type { KnowledgeState } from '../core/knowledge-state.js';

/** The configured lifecycle (the `SVC_KNOWLEDGE_*` settings). */
export interface LifecycleSettings {
  /** Age after its last write at which a node of the memory type expires. @default {} (off) */
  readonly retention: Readonly<Partial<Record<MemType, number>>>;
  /** Superseded versions closed longer ago than this are removed; 0 is off. @default 0 */
  readonly compactionHorizonMs: number;
  /** How often retention and compaction run on their own; 0 runs them only on request. @default 1 h */
  readonly intervalMs: number;
  /** How often VACUUM runs on its own; 0 is off. @default 0 */
  readonly vacuumIntervalMs: number;
}

/** A lifecycle request of the admin API: the rules to apply instead of the settings, and the scope. */
export interface LifecycleRequest {
  /** Memory type to age, e.g. `{ working: 86_400_000 }`; absent: the settings. */
  readonly retention?: Readonly<Partial<Record<MemType, number>>> | undefined;
  /** Absent: the setting. */
  readonly compactionHorizonMs?: number | undefined;
  /** Only this namespace id (absent: every namespace). */
  readonly nsId?: number | undefined;
}

/** Rows one preview lists at most per rule. */
export const PREVIEW_SAMPLE = 100;
/** Rows a preview counts at most per rule (`truncated` says when there are more). */
export const PREVIEW_SCAN = 10_000;
/** Rows deleted per transaction of a run. */
const RUN_BATCH = 500;

/** Parses `30s`, `15m`, `24h`, `7d` (or `off`/`0` when `allowOff`) into milliseconds. */
export function parseAge(field: string, text: unknown, allowOff = false): number {
  if (allowOff && (text === 'off' || text === '0' || text === 0)) return 0;
  const match = typeof text === 'string' ? /^(\d{1,9})(s|m|h|d)$/.exec(text) : null;
  if (!match || Number(match[1]) <= 0)
    throw new ValidationError(
      `${field}: ${JSON.stringify(text)?.slice(0, 40)} is not a duration such as 30s, 15m, 24h or 7d${allowOff ? ' (or off)' : ''}`,
      {
        code: 'invalid_request',
        details: { field },
      },
    );
  const unit: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  return Number(match[1]) * unit[match[2]!]!;
}

/** Retention rules from `{ "<mem_type>": "<duration>" }`. */
export function parseRetention(field: string, value: unknown): Partial<Record<MemType, number>> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ValidationError(`${field}: must be an object of memory type to age, e.g. {"working": "24h"}`, {
      code: 'invalid_request',
      details: { field },
    });
  const out: Partial<Record<MemType, number>> = {};
  for (const [type, age] of Object.entries(value)) {
    if (!(MEM_TYPES as readonly string[]).includes(type))
      throw new ValidationError(`${field}.${type.slice(0, 40)}: is not one of ${MEM_TYPES.join(', ')}`, {
        code: 'invalid_request',
        details: { field: `${field}.${type.slice(0, 40)}` },
      });
    const ms = parseAge(`${field}.${type}`, age, true);
    if (ms > 0) out[type as MemType] = ms;
  }
  return out;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Retention, compaction and VACUUM of one store. */
export class LifecycleService {
  readonly #core: KnowledgeState;
  readonly #store: LifecycleStore;
  readonly #settings: LifecycleSettings;
  readonly #afterDelete: () => void;
  readonly #timers: NodeJS.Timeout[] = [];
  #running = false;
  #last: { at: string; result: unknown } | undefined;

  constructor(core: KnowledgeState, settings: LifecycleSettings, afterDelete: () => void = () => undefined) {
    this.#core = core;
    this.#store = new LifecycleStore(core.db);
    this.#settings = settings;
    this.#afterDelete = afterDelete;
  }

  /** The settings in force and the last scheduled or requested run. */
  status() {
    const s = this.#settings;
    return {
      retention: Object.fromEntries(Object.entries(s.retention).map(([t, ms]) => [t, { max_age_ms: ms }])),
      compaction: { horizon_ms: s.compactionHorizonMs, enabled: s.compactionHorizonMs > 0 },
      interval_ms: s.intervalMs,
      vacuum: { interval_ms: s.vacuumIntervalMs, enabled: s.vacuumIntervalMs > 0 },
      size: this.#store.size(),
      last_run: this.#last ?? null,
    };
  }

  #rules(request: LifecycleRequest) {
    return {
      retention: request.retention ?? this.#settings.retention,
      horizon: request.compactionHorizonMs ?? this.#settings.compactionHorizonMs,
    };
  }

  /** What a run with `request` would remove now, without removing anything. */
  preview(request: LifecycleRequest = {}) {
    const { retention, horizon } = this.#rules(request);
    const now = this.#core.now();
    return {
      dry_run: true,
      retention: Object.entries(retention).map(([memType, ms]) => {
        const nodes = this.#store.expiring(memType, now - ms, PREVIEW_SCAN + 1, request.nsId);
        return {
          mem_type: memType,
          max_age_ms: ms,
          cutoff: iso(now - ms),
          nodes: Math.min(nodes.length, PREVIEW_SCAN),
          truncated: nodes.length > PREVIEW_SCAN,
          sample: nodes.slice(0, PREVIEW_SAMPLE).map((n) => ({ node_id: n.node_id, last_write: iso(n.last_write) })),
        };
      }),
      compaction:
        horizon > 0
          ? (() => {
              const versions = this.#store.superseded(now - horizon, PREVIEW_SCAN + 1, request.nsId);
              return {
                horizon_ms: horizon,
                cutoff: iso(now - horizon),
                versions: Math.min(versions.length, PREVIEW_SCAN),
                truncated: versions.length > PREVIEW_SCAN,
                sample: versions
                  .slice(0, PREVIEW_SAMPLE)
                  .map((v) => ({ node_id: v.node_id, version: v.version, superseded_at: iso(v.tx_to) })),
              };
            })()
          : null,
    };
  }

  /**
   * Removes what {@link preview} lists, in batches of one durable transaction each, yielding to the
   * event loop between them. Returns what was removed.
   */
  async run(request: LifecycleRequest = {}) {
    if (this.#running) throw new ValidationError('a lifecycle run is already in progress', { code: 'lifecycle_busy' });
    this.#running = true;
    try {
      const { retention, horizon } = this.#rules(request);
      const now = this.#core.now();
      const expired: { mem_type: string; max_age_ms: number; nodes: number }[] = [];
      for (const [memType, ms] of Object.entries(retention)) {
        let nodes = 0;
        for (;;) {
          const batch = this.#store.expiring(memType, now - ms, RUN_BATCH, request.nsId);
          if (batch.length === 0) break;
          const ids = batch.map((n) => n.node_id);
          const versions = this.#store.versionsOf(ids);
          nodes += this.#core.nodes.transaction(() => this.#store.deleteNodes(ids));
          this.#forget(versions);
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
        expired.push({ mem_type: memType, max_age_ms: ms, nodes });
      }
      let compacted = 0;
      if (horizon > 0) {
        for (;;) {
          const batch = this.#store.superseded(now - horizon, RUN_BATCH, request.nsId);
          if (batch.length === 0) break;
          compacted += this.#core.nodes.transaction(() => this.#store.deleteVersions(batch));
          this.#forget(batch);
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
      }
      const result = {
        dry_run: false,
        retention: expired,
        compaction: horizon > 0 ? { horizon_ms: horizon, versions: compacted } : null,
      };
      this.#last = { at: iso(this.#core.now()), result };
      return result;
    } finally {
      this.#running = false;
    }
  }

  #forget(versions: readonly { vid: number; dims: number | null }[]): void {
    const byDims = new Map<number, number[]>();
    for (const v of versions) if (v.dims !== null) byDims.set(v.dims, [...(byDims.get(v.dims) ?? []), v.vid]);
    for (const [dims, vids] of byDims) this.#core.index.remove(dims, vids);
    if (versions.length > 0) this.#afterDelete();
  }

  /** Runs VACUUM now; answers the file's size and free space before and after. */
  vacuum() {
    const before = this.#store.size();
    const started = performance.now();
    this.#store.vacuum();
    const result = { before, after: this.#store.size(), duration_ms: Math.round(performance.now() - started) };
    this.#last = { at: iso(this.#core.now()), result: { vacuum: result } };
    return result;
  }

  /** Starts the schedules the settings turn on (each timer unref'd: it never keeps the process alive). */
  start(onError: (error: unknown) => void): void {
    const s = this.#settings;
    const deletes = Object.keys(s.retention).length > 0 || s.compactionHorizonMs > 0;
    if (deletes && s.intervalMs > 0) {
      const timer = setInterval(() => {
        if (!this.#running) this.run().catch(onError);
      }, s.intervalMs);
      timer.unref();
      this.#timers.push(timer);
    }
    if (s.vacuumIntervalMs > 0) {
      const timer = setInterval(() => {
        try {
          if (!this.#running) this.vacuum();
        } catch (error) {
          onError(error);
        }
      }, s.vacuumIntervalMs);
      timer.unref();
      this.#timers.push(timer);
    }
  }

  /** Stops the schedules. */
  stop(): void {
    for (const timer of this.#timers.splice(0)) clearInterval(timer);
  }
}
