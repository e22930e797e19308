/**
 * Group reconciliation: applies the pure group plan to live allocations: stop, promote, place,
 * and restart in place when only rendered files changed. A group that can overlap (checked
 * services, no static port) starts before it stops: the new allocations run beside the old ones,
 * and the old ones are withdrawn and drained only once every new one passes ({@link handOver}).
 */
import { filesFingerprint, planGroup, rollFingerprint, type TaskGroupSpec } from '../../domain/scheduler/index.js';
import type { DriverCore } from './driver-core.js';
import { isTerminal } from './driver-core.js';
import type { AllocationRecord, JobRecord } from './driver-state.js';

/** What reconciling one group changed. */
export interface GroupChange {
  readonly scaled: boolean;
  readonly rolled: boolean;
  readonly restarted: boolean;
}

/**
 * True when a new allocation of the group can run beside the one it replaces: a long-running
 * service whose instances have checks to pass (so "ready" has a meaning) and no static port.
 */
export function canOverlap(job: JobRecord, group: TaskGroupSpec): boolean {
  return (
    job.spec.type === 'service' &&
    group.services.some((s) => s.check !== undefined) &&
    group.ports.every((p) => p.static === undefined)
  );
}

/** The version an allocation runs, as the planner compares it (rendered files count when the group overlaps). */
function plannedFingerprint(a: AllocationRecord, overlap: boolean, files: string): string {
  return overlap && a.filesFingerprint !== files ? `${a.fingerprint}+files:${a.filesFingerprint}` : a.fingerprint;
}

function liveAllocations(core: DriverCore, job: JobRecord, group: TaskGroupSpec): AllocationRecord[] {
  const batch = job.spec.type === 'batch';
  // Completed batch allocations count as done; lost service allocations were already replaced.
  return core
    .records()
    .filter(
      (a) =>
        a.jobId === job.spec.id &&
        a.taskGroup === group.name &&
        a.kind === 'group' &&
        a.desiredStatus === 'run' &&
        (batch || !isTerminal(a.status)),
    );
}

/**
 * Completes a start-before-stop change of one group: once the group has its count of current
 * allocations and every one passes its checks, the outdated ones are retired (withdrawn from the
 * registry, then drained). Returns the number retired; safe to call at any time.
 */
export function handOver(core: DriverCore, job: JobRecord, group: TaskGroupSpec): number {
  if (!canOverlap(job, group) || job.awaitingPromotion.includes(group.name)) return 0;
  const fingerprint = rollFingerprint(job.spec, group);
  const files = filesFingerprint(group);
  const live = liveAllocations(core, job, group);
  const current = live.filter((a) => plannedFingerprint(a, true, files) === fingerprint && !a.canary);
  const outdated = live.filter((a) => plannedFingerprint(a, true, files) !== fingerprint);
  if (outdated.length === 0) return 0;
  const ready =
    current.length >= group.count && current.every((a) => a.status === 'running' && core.runners.get(a.id)?.passing);
  if (!ready) return 0;
  for (const a of outdated) core.retireAllocation(a, 'replaced by a new job version');
  return outdated.length;
}

/** Converges one group of `job` on its spec; `promote` replaces old allocations by canaries. */
export async function reconcileGroup(
  core: DriverCore,
  job: JobRecord,
  group: TaskGroupSpec,
  promote: boolean,
): Promise<GroupChange> {
  const fingerprint = rollFingerprint(job.spec, group);
  const files = filesFingerprint(group);
  const overlap = canOverlap(job, group);
  const live = liveAllocations(core, job, group);
  const plan = planGroup(
    { count: group.count, canary: group.canary ?? 0, fingerprint, promote },
    live.map((a) => ({
      id: a.id,
      index: a.index,
      canary: a.canary,
      fingerprint: plannedFingerprint(a, overlap, files),
    })),
  );
  const outdatedIds = new Set(
    live.filter((a) => plannedFingerprint(a, overlap, files) !== fingerprint).map((a) => a.id),
  );
  // Start before stop: outdated allocations keep serving until their replacements pass (handOver).
  const stopping = new Set(plan.stop.filter((id) => !(overlap && outdatedIds.has(id))));
  const outdated = outdatedIds.size > 0;
  let restarted = false;
  for (const a of live) {
    if (stopping.has(a.id) || outdatedIds.has(a.id) || a.fingerprint !== fingerprint) continue;
    a.jobVersion = job.version;
    const filesChanged = a.filesFingerprint !== files;
    a.group = group;
    a.filesFingerprint = files;
    if (filesChanged && !isTerminal(a.status)) {
      restarted = true;
      void core.runners.get(a.id)?.restartInPlace('rendered files changed');
    }
  }
  // A replacement that cannot overlap (a fixed host port) has its container created before the
  // allocation it replaces stops: the gap is the container's start alone (ADR 0228).
  // The allocations it replaces are marked first: none counts as the new version's while it is made.
  const first = plan.place[0];
  if (!overlap && outdated && first !== undefined && stopping.size > 0 && group.task.image !== undefined) {
    for (const a of live)
      if (stopping.has(a.id)) {
        a.desiredStatus = 'stop';
        core.changed(a, a.status);
      }
    await core.prepareAhead(job, group, first.index);
  }
  // A scale-in of a group that can overlap withdraws first (the gateway stops choosing the
  // allocation), then drains after the withdraw delay: requests already sent to it finish.
  const retiring = overlap && !outdated;
  for (const a of live) if (retiring && stopping.has(a.id)) core.retireAllocation(a, 'scaled down');
  await Promise.all(
    live
      .filter((a) => stopping.has(a.id) && !retiring)
      // A replacement that cannot overlap starts once the ports of what it replaces are free.
      .map((a) => core.stopAllocation(a, outdated ? 'replaced by a new job version' : 'scaled down', outdated)),
  );
  for (const id of plan.promote) {
    const a = core.state.allocations[id];
    if (!a) continue;
    a.canary = false;
    core.runners.get(id)?.reregister();
    core.changed(a, a.status);
  }
  for (const placement of plan.place) await core.place(job, group, 'group', placement.index, placement.canary, {});
  if (plan.awaitingPromotion && !job.awaitingPromotion.includes(group.name)) job.awaitingPromotion.push(group.name);
  // Promotion (or a return to allocations still running) may complete a hand-over at once.
  if (overlap && !plan.awaitingPromotion) handOver(core, job, group);
  // A group scaled to zero has its next container created now: a wake only starts it (ADR 0228).
  if (group.count === 0 && job.status === 'running') void core.prepareAhead(job, group, 0);
  const rolled = outdated || plan.promote.length > 0;
  return { rolled, scaled: !rolled && (plan.place.length > 0 || plan.stop.length > 0), restarted };
}
