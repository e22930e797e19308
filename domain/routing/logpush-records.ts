/**
 * Edge log push batches reduced to aggregates: hostname, hour and status bucket counts. Only the
 * host, status and timestamp fields of each record are read; everything else is dropped unread.
 */
import { hourOf, statusBucket, type StatusBucket } from './access-buckets.js';
import { hostnameMatches, normalizeHostname } from './hostnames.js';

/** One aggregate of a batch. */
export interface LogpushCount {
  readonly hostname: string;
  readonly hour: string;
  readonly statusBucket: StatusBucket;
  readonly count: number;
}

/** What a batch reduced to. */
export interface LogpushAggregate {
  readonly counts: readonly LogpushCount[];
  readonly accepted: number;
  /** Records without a usable host, status or time, or for a hostname that is not a mapped endpoint. */
  readonly dropped: number;
}

const HOST_FIELDS = ['ClientRequestHost', 'clientRequestHost', 'hostname', 'host'];
const STATUS_FIELDS = ['EdgeResponseStatus', 'edgeResponseStatus', 'OriginResponseStatus', 'status'];
const TIME_FIELDS = ['EdgeStartTimestamp', 'edgeStartTimestamp', 'Datetime', 'timestamp'];

function field(record: Record<string, unknown>, names: readonly string[]): unknown {
  for (const name of names) if (record[name] !== undefined) return record[name];
  return undefined;
}

/** Parses a log push timestamp: RFC 3339, or Unix seconds, milliseconds or nanoseconds. */
export function logTimestamp(value: unknown): Date | undefined {
  if (typeof value === 'string' && /^\d+$/.test(value)) value = Number(value);
  if (typeof value === 'number' && Number.isFinite(value)) {
    const ms = value > 1e17 ? value / 1e6 : value > 1e11 ? value : value * 1000;
    const d = new Date(ms);
    return Number.isNaN(d.getTime()) ? undefined : d;
  }
  if (typeof value === 'string') {
    const d = new Date(value);
    return Number.isNaN(d.getTime()) ? undefined : d;
  }
  return undefined;
}

/** Splits a log push body into records: a JSON array, `{ records: [...] }`, or newline-delimited JSON text. */
export function logpushRecords(body: unknown): unknown[] {
  if (Array.isArray(body)) return body;
  if (typeof body === 'object' && body !== null && Array.isArray((body as { records?: unknown }).records))
    return (body as { records: unknown[] }).records;
  if (typeof body === 'object' && body !== null) return [body];
  if (typeof body !== 'string') return [];
  const out: unknown[] = [];
  for (const line of body.split('\n')) {
    const text = line.trim();
    if (text === '') continue;
    try {
      out.push(JSON.parse(text));
    } catch {
      out.push(undefined);
    }
  }
  return out;
}

/** Reduces records to counts for the mapped hostnames (endpoint patterns). */
export function aggregateLogpush(records: readonly unknown[], mapped: readonly string[]): LogpushAggregate {
  const counts = new Map<string, LogpushCount>();
  let accepted = 0;
  let dropped = 0;
  for (const raw of records) {
    if (typeof raw !== 'object' || raw === null) {
      dropped += 1;
      continue;
    }
    const record = raw as Record<string, unknown>;
    const host = field(record, HOST_FIELDS);
    const hostname = typeof host === 'string' ? normalizeHostname(host.replace(/:\d+$/, '')) : undefined;
    const status = Number(field(record, STATUS_FIELDS));
    const at = logTimestamp(field(record, TIME_FIELDS));
    if (
      hostname === undefined ||
      !Number.isFinite(status) ||
      at === undefined ||
      !mapped.some((m) => hostnameMatches(m, hostname))
    ) {
      dropped += 1;
      continue;
    }
    const hour = hourOf(at);
    const bucket = statusBucket(status);
    const key = `${hostname}\u0000${hour}\u0000${bucket}`;
    const previous = counts.get(key);
    counts.set(key, { hostname, hour, statusBucket: bucket, count: (previous?.count ?? 0) + 1 });
    accepted += 1;
  }
  return { counts: [...counts.values()], accepted, dropped };
}
