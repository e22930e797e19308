/**
 * A pod's usage as the metrics API (`metrics.k8s.io/v1beta1` PodMetrics) reports it, on its allocation:
 * CPU as percent of one core, memory as the working set, with the highest working set seen kept in
 * `peaks` (by allocation id) for right-sizing.
 */
import type { Allocation } from '../../domain/scheduler/index.js';

/** `allocation` with its pod's usage; unchanged when the metrics API reported none. */
export function withPodUsage(
  allocation: Allocation,
  usage: { cores: number; bytes: number; sampledAt?: string } | undefined,
  peaks: Map<string, number>,
): Allocation {
  if (usage === undefined) return allocation;
  const sampledAt = new Date(usage.sampledAt ?? Date.now()).toISOString();
  const peak = Math.max(peaks.get(allocation.id) ?? 0, usage.bytes);
  peaks.set(allocation.id, peak);
  return {
    ...allocation,
    cpu: { percent: usage.cores * 100, sampledAt },
    memory: { ...allocation.memory, currentRssBytes: usage.bytes, peakRssBytes: peak, sampledAt },
  };
}
