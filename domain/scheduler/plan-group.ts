/**
 * Task-group plan: the pure decision of which allocations of one group to place, stop or promote
 * so that observed allocations converge on the desired group (count, version, canaries).
 */

/** A live allocation of the group as the planner sees it. */
export interface PlannedAllocation {
  readonly id: string;
  readonly index: number;
  readonly canary: boolean;
  /** Roll fingerprint of the version the allocation runs. */
  readonly fingerprint: string;
}

/** Desired state of the group. */
export interface GroupDesire {
  readonly count: number;
  /** Canaries to start before replacing old allocations; 0 rolls directly. */
  readonly canary: number;
  readonly fingerprint: string;
  /** True when the operator (or the pipeline) promoted the canaries. */
  readonly promote: boolean;
}

/** A new allocation to place. */
export interface Placement {
  readonly index: number;
  readonly canary: boolean;
}

/** What to do for one group. */
export interface GroupPlan {
  readonly place: readonly Placement[];
  readonly stop: readonly string[];
  /** Canary allocations that become regular allocations. */
  readonly promote: readonly string[];
  /** True while canaries of a new version run beside the old allocations. */
  readonly awaitingPromotion: boolean;
}

/** Plans one group: scale without touching matching allocations, roll or canary changed ones. */
export function planGroup(desired: GroupDesire, live: readonly PlannedAllocation[]): GroupPlan {
  const matching = live.filter((a) => a.fingerprint === desired.fingerprint);
  const outdated = live.filter((a) => a.fingerprint !== desired.fingerprint);

  if (outdated.length > 0 && desired.canary > 0 && desired.count > 0 && !desired.promote) {
    const wanted = Math.min(desired.canary, desired.count);
    const used = new Set(live.map((a) => a.index));
    const surplus = matching.length > wanted ? [...matching].sort(byIndexDesc).slice(0, matching.length - wanted) : [];
    return {
      place: freeIndices(used, Math.max(0, wanted - matching.length)).map((index) => ({ index, canary: true })),
      stop: surplus.map((a) => a.id),
      promote: [],
      awaitingPromotion: true,
    };
  }

  const stop = outdated.map((a) => a.id);
  const kept = [...matching].sort(byIndexAsc);
  const extras = kept.length > desired.count ? [...kept].sort(byIndexDesc).slice(0, kept.length - desired.count) : [];
  const extraIds = new Set(extras.map((a) => a.id));
  const remaining = kept.filter((a) => !extraIds.has(a.id));
  const used = new Set(remaining.map((a) => a.index));
  return {
    place: freeIndices(used, Math.max(0, desired.count - remaining.length)).map((index) => ({ index, canary: false })),
    stop: [...stop, ...extras.map((a) => a.id)],
    promote: remaining.filter((a) => a.canary).map((a) => a.id),
    awaitingPromotion: false,
  };
}

/** True when a plan changes nothing. */
export function isEmptyGroupPlan(plan: GroupPlan): boolean {
  return plan.place.length === 0 && plan.stop.length === 0 && plan.promote.length === 0;
}

function freeIndices(used: ReadonlySet<number>, n: number): number[] {
  const out: number[] = [];
  for (let i = 0; out.length < n; i += 1) if (!used.has(i)) out.push(i);
  return out;
}

function byIndexAsc(a: PlannedAllocation, b: PlannedAllocation): number {
  return a.index - b.index;
}

function byIndexDesc(a: PlannedAllocation, b: PlannedAllocation): number {
  return b.index - a.index;
}
