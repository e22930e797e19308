/**
 * Sources: labels and credibility set by operators, and the trust timeline derived from them.
 */
import { DEFAULT_SOURCE_CREDIBILITY } from '../../domain/knowledge/modes.js';
import type { KnowledgeState } from '../core/knowledge-state.js';
import { isoTime } from '../core/time.js';

/** Body of `POST /sources/label`. */
export interface SourceLabelRequest {
  readonly source_id: string;
  readonly labels?: readonly string[];
  readonly credibility?: number;
  readonly reason?: string;
}

/** Labels sources and reports their trust. */
export class SourceService {
  readonly #core: KnowledgeState;

  constructor(core: KnowledgeState) {
    this.#core = core;
  }

  /** Sets a source's labels and, optionally, its credibility; a credibility change joins the timeline. */
  label(tenant: string, nsName: string, request: SourceLabelRequest) {
    const core = this.#core;
    const ns = core.namespaceForWrite(tenant, nsName, undefined);
    return core.nodes.transaction(() => {
      const previous = core.sources.get(ns.id, request.source_id);
      const credibility = request.credibility ?? previous?.credibility ?? DEFAULT_SOURCE_CREDIBILITY;
      const labels = [...new Set(request.labels ?? (previous ? (JSON.parse(previous.labels) as string[]) : []))].sort();
      const tx = core.nextTx();
      core.sources.upsert({
        ns_id: ns.id,
        source_id: request.source_id,
        credibility,
        labels: JSON.stringify(labels),
        updated_at: tx,
      });
      const before = previous?.credibility ?? DEFAULT_SOURCE_CREDIBILITY;
      if (previous === undefined || before !== credibility) {
        core.sources.appendTrust(ns.id, {
          source_id: request.source_id,
          node_id: null,
          action: 'label',
          credibility,
          previous: before,
          reason: request.reason ?? null,
          tx_time: tx,
        });
      }
      return { source_id: request.source_id, labels, credibility, updated_at: isoTime(tx) };
    });
  }

  /** The source's current credibility (the default for unlabelled sources), labels and trust timeline. */
  trust(tenant: string, nsName: string, sourceId: string) {
    const core = this.#core;
    const ns = core.namespace(tenant, nsName);
    const row = core.sources.get(ns.id, sourceId);
    const timeline = core.sources.trust(ns.id, sourceId);
    return {
      source_id: sourceId,
      credibility: row?.credibility ?? DEFAULT_SOURCE_CREDIBILITY,
      labels: row ? (JSON.parse(row.labels) as string[]) : [],
      timeline: timeline.map((t) => ({
        node_id: t.node_id,
        action: t.action,
        source_credibility: t.credibility,
        previous_credibility: t.previous,
        reason: t.reason,
        tx_time: isoTime(t.tx_time),
      })),
    };
  }
}
