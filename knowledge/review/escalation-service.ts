/**
 * Escalation digests of the review queue: the live grouped digest, durable snapshots of it, and
 * the handoff feed of snapshots filtered by owner and escalation level (docs/adr/0032).
 */
import { ValidationError } from '../../domain/errors.js';
import { escalationDigest, type EscalationDigest } from '../../domain/knowledge/escalation-digest.js';
import { ESCALATION_LEVELS, type EscalationLevel, type ReviewThresholds } from '../../domain/knowledge/review-rules.js';
import type { DigestRow } from '../../store/knowledge/handoff-store.js';
import type { KnowledgeState, Namespace } from '../core/knowledge-state.js';
import { ReviewService } from './review-service.js';
import { isoTime } from '../core/time.js';

/** Which escalated items a digest covers. */
export interface DigestScope {
  readonly escalationAfterHours?: number | undefined;
  readonly owner?: string | undefined;
  readonly escalationLevel?: string | undefined;
}

/** Builds, records and lists escalation digests. */
export class EscalationService {
  readonly #core: KnowledgeState;
  readonly #review: ReviewService;

  constructor(core: KnowledgeState, review: ReviewService) {
    this.#core = core;
    this.#review = review;
  }

  /** The digest of the escalated items at `now` within the scope. */
  build(ns: Namespace, scope: DigestScope, now: number, note?: string): EscalationDigest {
    if (
      scope.escalationLevel !== undefined &&
      !(ESCALATION_LEVELS as readonly string[]).includes(scope.escalationLevel)
    ) {
      throw new ValidationError(
        `escalation_level: "${scope.escalationLevel.slice(0, 64)}" is not one of ${ESCALATION_LEVELS.join(', ')}`,
        { code: 'invalid_request' },
      );
    }
    const t: ReviewThresholds = ReviewService.thresholds({
      ...(scope.escalationAfterHours !== undefined ? { escalationAfterHours: scope.escalationAfterHours } : {}),
    });
    const { items } = this.#review.select(
      ns,
      t,
      now,
      {
        ...(scope.owner !== undefined ? { owner: scope.owner } : {}),
        ...(scope.escalationLevel !== undefined ? { escalationLevel: scope.escalationLevel as EscalationLevel } : {}),
      },
      Number.MAX_SAFE_INTEGER,
      (_s, level) => level !== null,
    );
    return escalationDigest(items, note);
  }

  /** `GET /review/escalations`: the live digest. */
  digest(tenant: string, nsName: string, scope: DigestScope) {
    const core = this.#core;
    const ns = core.namespace(tenant, nsName);
    const now = core.now();
    return { generated_at: isoTime(now), ...digestView(this.build(ns, scope, now)) };
  }

  /** Records a durable snapshot of the digest (kind `snapshot`, or `handoff` for deliveries). */
  record(ns: Namespace, scope: DigestScope, note: string | undefined, kind: 'snapshot' | 'handoff'): DigestRow {
    const core = this.#core;
    const now = core.now();
    const digest = this.build(ns, scope, now, note);
    return core.nodes.transaction(() =>
      core.handoffs.insertDigest({
        event_id: core.newId(),
        ns_id: ns.id,
        kind,
        owner: scope.owner ?? null,
        escalation_level: scope.escalationLevel ?? null,
        escalation_after_hours: ReviewService.thresholds({
          ...(scope.escalationAfterHours !== undefined ? { escalationAfterHours: scope.escalationAfterHours } : {}),
        }).escalationAfterHours,
        note: note ?? null,
        digest: JSON.stringify(digest),
        created_at: core.nextTx(),
      }),
    );
  }

  /** `POST /review/escalation-digests`. */
  recordSnapshot(tenant: string, nsName: string, scope: DigestScope, note?: string) {
    const ns = this.#core.namespace(tenant, nsName);
    return snapshotView(this.record(ns, scope, note, 'snapshot'));
  }

  /** `GET /review/escalation-digests`: snapshots, newest first. */
  snapshots(tenant: string, nsName: string, limit = 100, offset = 0) {
    const ns = this.#core.namespace(tenant, nsName);
    return this.#core.handoffs.digests(ns.id, limit, offset).map(snapshotView);
  }

  /** `GET /review/handoffs`: snapshots with their groups filtered by owner and level; empty ones left out. */
  handoffs(tenant: string, nsName: string, owner?: string, escalationLevel?: string, limit = 100) {
    const ns = this.#core.namespace(tenant, nsName);
    if (escalationLevel !== undefined && !(ESCALATION_LEVELS as readonly string[]).includes(escalationLevel)) {
      throw new ValidationError(
        `escalation_level: "${escalationLevel.slice(0, 64)}" is not one of ${ESCALATION_LEVELS.join(', ')}`,
        { code: 'invalid_request' },
      );
    }
    const out = [];
    for (const row of this.#core.handoffs.digests(ns.id, 1000, 0)) {
      const digest = JSON.parse(row.digest) as EscalationDigest;
      const groups = digest.groups.filter(
        (g) =>
          (owner === undefined || g.owner === owner) &&
          (escalationLevel === undefined || g.escalationLevel === escalationLevel),
      );
      if (groups.length === 0) continue;
      out.push({
        ...snapshotView(row),
        total_escalated: groups.reduce((n, g) => n + g.count, 0),
        groups: groups.map(groupView),
      });
      if (out.length >= limit) break;
    }
    return out;
  }
}

/** REST form of a group. */
export function groupView(g: EscalationDigest['groups'][number]) {
  return {
    owner: g.owner,
    source_id: g.sourceId,
    type: g.type,
    escalation_level: g.escalationLevel,
    count: g.count,
    max_priority: g.maxPriority,
    max_age_hours: g.maxAgeHours,
    review_ids: g.reviewIds,
  };
}

/** REST form of a digest. */
export function digestView(d: EscalationDigest) {
  return { total_escalated: d.totalEscalated, note: d.note, groups: d.groups.map(groupView) };
}

/** REST form of a snapshot row. */
export function snapshotView(row: DigestRow) {
  return {
    digest_event_id: row.event_id,
    kind: row.kind,
    created_at: isoTime(row.created_at),
    owner: row.owner,
    escalation_level: row.escalation_level,
    escalation_after_hours: row.escalation_after_hours,
    ...digestView(JSON.parse(row.digest) as EscalationDigest),
  };
}
