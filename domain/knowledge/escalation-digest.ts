/**
 * Grouped escalation digests: escalated review items grouped by owner, source, type and level
 * (docs/adr/0032-review-escalation.md).
 */
import { UNASSIGNED, type EscalationLevel, type ReviewItemState, type ReviewType } from './review-rules.js';

/** One group of a digest. */
export interface EscalationGroup {
  readonly owner: string;
  readonly sourceId: string | null;
  readonly type: ReviewType;
  readonly escalationLevel: EscalationLevel;
  readonly count: number;
  readonly maxPriority: number;
  readonly maxAgeHours: number;
  readonly reviewIds: readonly string[];
}

/** A digest of escalated items. */
export interface EscalationDigest {
  readonly totalEscalated: number;
  readonly note: string;
  readonly groups: readonly EscalationGroup[];
}

/** Groups the escalated items (others are ignored); groups sort by max priority, then age. */
export function escalationDigest(items: readonly ReviewItemState[], note?: string): EscalationDigest {
  const groups = new Map<
    string,
    {
      owner: string;
      sourceId: string | null;
      type: ReviewType;
      escalationLevel: EscalationLevel;
      items: ReviewItemState[];
    }
  >();
  let total = 0;
  for (const item of items) {
    if (!item.escalated || item.escalationLevel === null) continue;
    total++;
    const owner = item.owner ?? UNASSIGNED;
    const key = JSON.stringify([owner, item.sourceId, item.type, item.escalationLevel]);
    const group = groups.get(key) ?? {
      owner,
      sourceId: item.sourceId,
      type: item.type,
      escalationLevel: item.escalationLevel,
      items: [],
    };
    group.items.push(item);
    groups.set(key, group);
  }
  const out: EscalationGroup[] = [...groups.values()].map((g) => ({
    owner: g.owner,
    sourceId: g.sourceId,
    type: g.type,
    escalationLevel: g.escalationLevel,
    count: g.items.length,
    maxPriority: Math.max(...g.items.map((i) => i.priority)),
    maxAgeHours: Math.max(...g.items.map((i) => i.escalationAgeHours)),
    reviewIds: g.items.map((i) => i.id).sort(),
  }));
  out.sort(
    (a, b) =>
      b.maxPriority - a.maxPriority ||
      b.maxAgeHours - a.maxAgeHours ||
      a.owner.localeCompare(b.owner) ||
      a.type.localeCompare(b.type) ||
      String(a.sourceId).localeCompare(String(b.sourceId)),
  );
  const summary =
    total === 0
      ? 'no escalated review items'
      : `${total} escalated review item${total === 1 ? '' : 's'} in ${out.length} group${out.length === 1 ? '' : 's'}; oldest ${Math.max(...out.map((g) => g.maxAgeHours))} h`;
  return { totalEscalated: total, note: note ?? summary, groups: out };
}
