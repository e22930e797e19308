/**
 * The control plane's recent API access events: the status bucket of each of the last requests
 * the API answered, in a fixed-size ring (scrapes of `/metrics` are not recorded). Read by
 * `svc_access_events_recent_total{status}` at each scrape. In memory only: it starts empty.
 */

/** Status buckets of an access event; `other` is anything outside 100-599. */
export const AccessStatusBucket = {
  informational: '1xx',
  success: '2xx',
  redirect: '3xx',
  clientError: '4xx',
  serverError: '5xx',
  other: 'other',
} as const;
export type AccessStatusBucket = (typeof AccessStatusBucket)[keyof typeof AccessStatusBucket];
/** Every bucket, in order. */
export const ACCESS_STATUS_BUCKETS: readonly AccessStatusBucket[] = Object.values(AccessStatusBucket);

/** Events the ring keeps by default. */
export const RECENT_ACCESS_CAPACITY = 1000;

/** Paths whose requests are scrapes, never recorded (the spec keeps scrape traffic out of the buffer). */
export const SCRAPE_PATHS: readonly string[] = ['/metrics', '/api/metrics'];

/** Where an HTTP edge reports a finished request. */
export interface AccessRecorder {
  record(status: number): void;
}

function bucketIndex(status: number): number {
  if (!Number.isInteger(status) || status < 100 || status > 599) return ACCESS_STATUS_BUCKETS.length - 1;
  return Math.floor(status / 100) - 1;
}

/** The last `capacity` access events by status bucket; recording and counting are O(1). */
export class RecentAccessRing implements AccessRecorder {
  readonly capacity: number;
  readonly #slots: Uint8Array;
  readonly #counts: number[] = ACCESS_STATUS_BUCKETS.map(() => 0);
  #next = 0;
  #size = 0;

  constructor(capacity = RECENT_ACCESS_CAPACITY) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`capacity: ${capacity} is not a positive whole number`);
    this.capacity = capacity;
    this.#slots = new Uint8Array(capacity);
  }

  /** Records one answered request by its status; the oldest event leaves when the ring is full. */
  record(status: number): void {
    const bucket = bucketIndex(status);
    if (this.#size === this.capacity) this.#counts[this.#slots[this.#next]!]! -= 1;
    else this.#size += 1;
    this.#slots[this.#next] = bucket;
    this.#counts[bucket]! += 1;
    this.#next = (this.#next + 1) % this.capacity;
  }

  /** How many events the ring holds. */
  get size(): number {
    return this.#size;
  }

  /** Events in the ring per bucket (every bucket present, zero included). */
  counts(): Record<AccessStatusBucket, number> {
    return Object.fromEntries(ACCESS_STATUS_BUCKETS.map((bucket, i) => [bucket, this.#counts[i]!])) as Record<
      AccessStatusBucket,
      number
    >;
  }
}
