/**
 * Clock: where the event surface reads the time, injectable so tests advance it.
 */

/** A source of the current time in milliseconds since the epoch. */
export interface Clock {
  now(): number;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to, for tests and models. */
export class ManualClock implements Clock {
  constructor(private ms: number = Date.parse('2026-01-01T00:00:00.000Z')) {}

  now(): number {
    return this.ms;
  }

  /** Moves the clock forward by `ms`. */
  advance(ms: number): void {
    this.ms += ms;
  }

  set(ms: number): void {
    this.ms = ms;
  }
}
