/**
 * SQL for sources (credibility, labels) and their append-only trust timeline.
 */
import type { Db } from '../database.js';
import type { SourceRow, SourceTrustRow } from './rows.js';

/** Sources of one database. */
export class SourceStore {
  readonly #s;

  constructor(db: Db) {
    this.#s = {
      get: db.prepare('SELECT * FROM kn_sources WHERE ns_id = ? AND source_id = ?'),
      upsert:
        db.prepare(`INSERT INTO kn_sources (ns_id, source_id, credibility, labels, updated_at) VALUES (?, ?, ?, ?, ?)
        ON CONFLICT (ns_id, source_id) DO UPDATE SET credibility = excluded.credibility, labels = excluded.labels, updated_at = excluded.updated_at`),
      trustInsert: db.prepare(
        'INSERT INTO kn_source_trust (ns_id, source_id, node_id, action, credibility, previous, reason, tx_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      trustAfter: db.prepare(
        'SELECT previous FROM kn_source_trust WHERE ns_id = ? AND source_id = ? AND tx_time > ? ORDER BY id LIMIT 1',
      ),
      trustList: db.prepare(
        'SELECT id, source_id, node_id, action, credibility, previous, reason, tx_time FROM kn_source_trust WHERE ns_id = ? AND source_id = ? ORDER BY id',
      ),
    };
  }

  get(nsId: number, sourceId: string): SourceRow | undefined {
    return this.#s.get.get(nsId, sourceId) as SourceRow | undefined;
  }

  upsert(row: SourceRow): void {
    this.#s.upsert.run(row.ns_id, row.source_id, row.credibility, row.labels, row.updated_at);
  }

  appendTrust(nsId: number, event: Omit<SourceTrustRow, 'id'>): void {
    this.#s.trustInsert.run(
      nsId,
      event.source_id,
      event.node_id,
      event.action,
      event.credibility,
      event.previous,
      event.reason,
      event.tx_time,
    );
  }

  /**
   * The credibility a source had at transaction time `at`, from its trust timeline: the value the
   * first later change replaced, or its current one; undefined when it had none (the default applies).
   */
  credibilityAt(nsId: number, sourceId: string, at: number): number | undefined {
    const later = this.#s.trustAfter.get(nsId, sourceId, at) as { previous: number | null } | undefined;
    if (later !== undefined) return later.previous ?? undefined;
    return this.get(nsId, sourceId)?.credibility;
  }

  trust(nsId: number, sourceId: string): SourceTrustRow[] {
    return this.#s.trustList.all(nsId, sourceId) as SourceTrustRow[];
  }
}
