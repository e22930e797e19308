/**
 * Group reconciliation: applies the pure group plan to live allocations: stop, promote, place,
 * and restart in place when only rendered files changed.
 */
import { filesFingerprint, planGroup, rollFingerprint, type TaskGroupSpec } from '../../domain/scheduler/index.js';
import type { DriverCore } from './driver-core.js';
import { isTerminal } from './driver-core.js';
import type { JobRecord } from './driver-state.js';

/** What reconciling one group changed. */
export interface GroupChange {
  readonly scaled: boolean;
  readonly rolled: boolean;
  readonly restarted: boolean;
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
  const batch = job.spec.type === 'batch';
  // Completed batch allocations count as done; lost service allocations were already replaced.
  const live = core
    .records()
    .filter(
      (a) =>
        a.jobId === job.spec.id &&
        a.taskGroup === group.name &&
        a.kind === 'group' &&
        a.desiredStatus === 'run' &&
        (batch || !isTerminal(a.status)),
    );
  const plan = planGroup(
    { count: group.count, canary: group.canary ?? 0, fingerprint, promote },
    live.map((a) => ({ id: a.id, index: a.index, canary: a.canary, fingerprint: a.fingerprint })),
  );
  const stopping = new Set(plan.stop);
  const outdated = live.some((a) => a.fingerprint !== fingerprint);
  let restarted = false;
  for (const a of live) {
    if (stopping.has(a.id) || a.fingerprint !== fingerprint) continue;
    a.jobVersion = job.version;
    const filesChanged = a.filesFingerprint !== files;
    a.group = group;
    a.filesFingerprint = files;
    if (filesChanged && !isTerminal(a.status)) {
      restarted = true;
      void core.runners.get(a.id)?.restartInPlace('rendered files changed');
    }
  }
  await Promise.all(
    live
      .filter((a) => stopping.has(a.id))
      .map((a) => core.stopAllocation(a, outdated ? 'replaced by a new job version' : 'scaled down')),
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
  const rolled = outdated || plan.promote.length > 0;
  return { rolled, scaled: !rolled && (plan.place.length > 0 || plan.stop.length > 0), restarted };
}
