/**
 * The end of an allocation's container: whether the kernel killed it for its memory limit, and its
 * removal. The attached client that leads the task can die before its container (a SIGKILL after
 * the drain timeout, a deadline); the removal stops whatever is left.
 */
import type { ContainerRuntime } from './container-runtime.js';
import { containerName } from './container-runtime.js';
import { cgroupParent, memoryReading, removeCgroupParent } from './container-cgroup.js';

/**
 * Reads whether the container was OOM-killed, then removes it (stopping it first if it still runs)
 * and its parent cgroup. The kernel's verdict is read from the parent cgroup where there is one (an
 * OOM kill there, or a memory peak at the limit), else from the runtime's own flag.
 */
export async function finishContainer(
  runtime: ContainerRuntime,
  allocationId: string,
  limitBytes: number,
): Promise<{ oomKilled: boolean }> {
  const name = containerName(allocationId);
  const inspected = await runtime.podman.run([
    'inspect',
    '--type',
    'container',
    '--format',
    '{{.State.OOMKilled}}',
    name,
  ]);
  let oomKilled = inspected.ok && inspected.stdout.trim() === 'true';
  await removeContainer(runtime, allocationId);
  if (runtime.cgroupParentRoot !== undefined) {
    const mount = runtime.cgroupMount ?? '/sys/fs/cgroup';
    const parent = cgroupParent(runtime.cgroupParentRoot, allocationId);
    const reading = memoryReading(mount, parent);
    // v1 keeps no OOM count for a child's limit: a peak within 2 % of it means the limit was hit.
    if ((reading.oomKills ?? 0) > 0 || (reading.peakBytes ?? 0) >= limitBytes * 0.98) oomKilled = true;
    removeCgroupParent(mount, parent);
  }
  return { oomKilled };
}

/** Removes an allocation's container at once (`rm --force --time 0`); nothing when it is gone. */
export async function removeContainer(runtime: ContainerRuntime, allocationId: string): Promise<void> {
  await runtime.podman.run(['rm', '--force', '--ignore', '--time', '0', containerName(allocationId)]);
}
