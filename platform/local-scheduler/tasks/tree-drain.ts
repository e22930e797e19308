/**
 * The drain of a task's process tree: its drain signal, a wait up to the drain timeout, then
 * SIGKILL for what is left.
 */
import type { DrainSpec, TaskEventType } from '../../../domain/scheduler/index.js';
import { signalTree, waitForTreeExit } from './process-table.js';

/**
 * Drains the tree led by `pid`; `report` records the kill and its result as task events. `alsoSignal`
 * sends the drain signal to processes outside the tree that belong to the task (a container's).
 */
export async function drainTree(
  pid: number,
  drain: DrainSpec,
  report: (type: TaskEventType, message: string) => void,
  alsoSignal?: (signal: NodeJS.Signals) => void,
): Promise<void> {
  const { signal, timeout } = drain;
  report('Killing', `Sent ${signal}; force killing after ${timeout.milliseconds}ms`);
  signalTree(pid, signal);
  alsoSignal?.(signal);
  const exited = await waitForTreeExit(pid, timeout.milliseconds);
  if (!exited) {
    signalTree(pid, 'SIGKILL');
    await waitForTreeExit(pid, 5000);
  }
  report(
    'Killed',
    exited
      ? `Task exited after ${signal}`
      : `Task killed with SIGKILL after the drain timeout of ${timeout.milliseconds}ms`,
  );
}
