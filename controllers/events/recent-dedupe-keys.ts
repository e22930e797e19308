/**
 * The dedupe window's fast path (docs/adr/0212): the dedupe keys recorded in the last hour that the
 * event service holds in memory, oldest first (a key recorded again moves to the end), each with the
 * time it was recorded and, until its commit is durable, the emit that records it. The commit's read of
 * control.db decides whether a key is a duplicate; this map only answers a duplicate early and lets a
 * duplicate of a pending emit wait for it. It holds at most `cap` keys: past the cap the oldest answered
 * keys are forgotten even inside the window, and pruning walks from the oldest and stops at the first
 * key it keeps, so a commit never pays for the keys kept.
 */
import { DEDUPE_WINDOW_MS } from '../../domain/events/event-record.js';

export interface RecentKey {
  readonly seenMs: number;
  /** The emit recording the key, until its commit is durable. */
  pending?: Promise<unknown>;
}

/** The default cap: 100,000 keys (a few MiB). */
export const DEDUPE_KEYS_IN_MEMORY = 100_000;

export class RecentDedupeKeys {
  readonly #keys = new Map<string, RecentKey>();
  /** The most keys held. */
  readonly cap: number;

  constructor(cap = DEDUPE_KEYS_IN_MEMORY) {
    if (!Number.isInteger(cap) || cap < 0) throw new RangeError(`dedupe keys in memory: ${cap} is not a whole number`);
    this.cap = cap;
  }

  get size(): number {
    return this.#keys.size;
  }

  /** The key's entry while it is within the window at `nowMs`. */
  recent(key: string, nowMs: number): RecentKey | undefined {
    const entry = this.#keys.get(key);
    return entry && nowMs - entry.seenMs < DEDUPE_WINDOW_MS ? entry : undefined;
  }

  /** Holds `key` as the newest. */
  remember(key: string, entry: RecentKey): void {
    this.#keys.delete(key);
    this.#keys.set(key, entry);
  }

  /** The key's emit is durable: a duplicate no longer waits for it. */
  settled(key: string): void {
    const entry = this.#keys.get(key);
    if (entry) delete entry.pending;
  }

  /** The key's emit failed: forgotten, so that a retry records it. */
  forget(key: string): void {
    this.#keys.delete(key);
  }

  /** Whether the keys held passed the cap. */
  overCap(): boolean {
    return this.#keys.size > this.cap;
  }

  /** Forgets the oldest keys that left the window at `nowMs`, and beyond the cap the oldest answered ones. */
  prune(nowMs: number): void {
    for (const [key, entry] of this.#keys) {
      if (entry.pending) break;
      if (nowMs - entry.seenMs < DEDUPE_WINDOW_MS && this.#keys.size <= this.cap) break;
      this.#keys.delete(key);
    }
  }
}
