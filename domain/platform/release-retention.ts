/**
 * Which platform releases an ended upgrade removes from disk (ADR 0088): all but the `keep` most
 * recently used, never a protected one (the release `current` points at, the rollback target of the
 * upgrade) and never one a live process still runs from.
 */

/** Ids to remove, from `onDisk` ordered most recently used first. */
export function releasesToPrune(
  onDisk: readonly string[],
  keep: number,
  protectedIds: ReadonlySet<string>,
  inUse: (id: string) => boolean,
): string[] {
  const kept = new Set<string>(protectedIds);
  for (const id of onDisk) {
    if (kept.size >= Math.max(keep, protectedIds.size)) break;
    kept.add(id);
  }
  return onDisk.filter((id) => !kept.has(id) && !inUse(id));
}
