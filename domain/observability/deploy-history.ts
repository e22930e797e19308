/**
 * The deploy counters of `/metrics` (`svc_deploys_total`, `svc_deploy_duration_seconds`,
 * `svc_deploy_last_started_timestamp_seconds`), kept from the durable deployment records: seeded
 * from their totals when the control plane starts, then advanced by the deploys that finished or
 * started since a cursor. Pure bookkeeping; the reads are in store/control/deployment-history.ts
 * (docs/adr/0112-deploy-counters-from-durable-records.md).
 *
 * The cursor re-reads a window behind the newest time it saw and skips ids it already counted,
 * so a row written with a slightly older timestamp (two workers, a replica, a clock step) is still
 * counted, once.
 */

/** How far behind its newest time the cursor re-reads. */
export const DEPLOY_CURSOR_WINDOW_MS = 10 * 60_000;

/** Finished deploys of one app and status, and their summed duration. */
export interface DeployTotal {
  readonly app: string;
  readonly status: string;
  readonly count: number;
  /** How many of `count` had started (a deploy cancelled while queued has no duration). */
  readonly timed: number;
  /** Summed duration of the `timed` ones, whole milliseconds (so seed and increments add up exactly). */
  readonly ms: number;
}

/** A finished deploy as the cursor reads it. */
export interface FinishedDeployRecord {
  readonly id: string;
  readonly app: string;
  readonly status: string;
  readonly startedAt: string | null;
  readonly finishedAt: string;
}

/** A started deploy as the cursor reads it. */
export interface StartedDeployRecord {
  readonly id: string;
  readonly app: string;
  readonly startedAt: string;
}

/** What the seed reads in one consistent snapshot. */
export interface DeployHistorySeed {
  readonly totals: readonly DeployTotal[];
  readonly lastStarts: readonly { readonly app: string; readonly startedAt: string }[];
  /** Deploys finished within the window before `at` (already in `totals`). */
  readonly recentFinished: readonly FinishedDeployRecord[];
  /** Deploys started within the window before `at` (already in `lastStarts`). */
  readonly recentStarted: readonly StartedDeployRecord[];
  /** When the seed was read, epoch milliseconds. */
  readonly at: number;
}

/** A cursor over one timestamp column: the newest time seen and the ids counted within the window. */
class Cursor {
  #newest: number;
  readonly #seen = new Map<string, number>();

  constructor(at: number) {
    this.#newest = at;
  }

  /** ISO time from which the next read fetches. */
  since(): string {
    return new Date(Math.max(0, this.#newest - DEPLOY_CURSOR_WINDOW_MS)).toISOString();
  }

  /** True the first time an id is offered (then remembered while inside the window). */
  admit(id: string, at: string): boolean {
    if (this.#seen.has(id)) return false;
    const ms = Date.parse(at);
    this.#seen.set(id, Number.isFinite(ms) ? ms : this.#newest);
    if (ms > this.#newest) this.#newest = ms;
    return true;
  }

  /** Forgets ids older than the window (they can no longer be read again). */
  prune(): void {
    const floor = this.#newest - DEPLOY_CURSOR_WINDOW_MS;
    for (const [id, ms] of this.#seen) if (ms < floor) this.#seen.delete(id);
  }
}

/** Deploy totals per app and status and the latest start per app, kept current from records. */
export class DeployHistory {
  readonly #totals = new Map<string, { app: string; status: string; count: number; timed: number; ms: number }>();
  readonly #lastStart = new Map<string, number>();
  readonly #finished: Cursor;
  readonly #started: Cursor;

  constructor(seed: DeployHistorySeed) {
    for (const t of seed.totals) this.#totals.set(`${t.app}\u0000${t.status}`, { ...t });
    for (const s of seed.lastStarts) this.#noteStart(s.app, s.startedAt);
    this.#finished = new Cursor(seed.at);
    this.#started = new Cursor(seed.at);
    for (const r of seed.recentFinished) this.#finished.admit(r.id, r.finishedAt);
    for (const r of seed.recentStarted) this.#started.admit(r.id, r.startedAt);
  }

  /** ISO time from which to read deploys that finished. */
  finishedSince(): string {
    return this.#finished.since();
  }

  /** ISO time from which to read deploys that started. */
  startedSince(): string {
    return this.#started.since();
  }

  /** Counts every deploy of `rows` not counted before. */
  addFinished(rows: readonly FinishedDeployRecord[]): void {
    for (const row of rows) {
      if (!this.#finished.admit(row.id, row.finishedAt)) continue;
      const key = `${row.app}\u0000${row.status}`;
      const total = this.#totals.get(key) ?? { app: row.app, status: row.status, count: 0, timed: 0, ms: 0 };
      total.count += 1;
      const ms = durationMs(row.startedAt, row.finishedAt);
      if (ms !== undefined) {
        total.timed += 1;
        total.ms += ms;
      }
      this.#totals.set(key, total);
    }
    this.#finished.prune();
  }

  /** Moves the latest start of each app of `rows` forward. */
  addStarted(rows: readonly StartedDeployRecord[]): void {
    for (const row of rows) if (this.#started.admit(row.id, row.startedAt)) this.#noteStart(row.app, row.startedAt);
    this.#started.prune();
  }

  /** Totals per app and status, sorted. */
  totals(): DeployTotal[] {
    return [...this.#totals.values()]
      .map((t) => ({ ...t }))
      .sort((a, b) => a.app.localeCompare(b.app) || a.status.localeCompare(b.status));
  }

  /** The latest deploy start per app, Unix seconds. */
  lastStarts(): { app: string; seconds: number }[] {
    return [...this.#lastStart]
      .map(([app, ms]) => ({ app, seconds: ms / 1000 }))
      .sort((a, b) => a.app.localeCompare(b.app));
  }

  #noteStart(app: string, startedAt: string): void {
    const ms = Date.parse(startedAt);
    if (Number.isFinite(ms) && ms > (this.#lastStart.get(app) ?? -Infinity)) this.#lastStart.set(app, ms);
  }
}

/** Whole milliseconds from start to finish; undefined without a start or with unreadable times. Never negative. */
export function durationMs(startedAt: string | null, finishedAt: string): number | undefined {
  if (startedAt === null) return undefined;
  const ms = Date.parse(finishedAt) - Date.parse(startedAt);
  return Number.isFinite(ms) ? Math.max(0, Math.round(ms)) : undefined;
}
