/**
 * The host id events and capacity checks carry: the configured one, else the first short
 * hostname, persisted on first use so a later rename of the host does not split its history.
 */
import os from 'node:os';
import type { Db } from '../../store/database.js';
import { readMeta, writeMeta } from '../../store/control/event-meta.js';

/** The host id: configured, else the persisted first short hostname. */
export function resolveHostId(db: Db, configured: string | undefined, at: string): string {
  if (configured !== undefined) return configured;
  const stored = readMeta(db, 'events.host-id');
  if (stored !== undefined) return stored;
  const short = (os.hostname().split('.')[0] ?? 'host').replace(/[^A-Za-z0-9._-]/g, '-') || 'host';
  writeMeta(db, 'events.host-id', short, at);
  return short;
}
