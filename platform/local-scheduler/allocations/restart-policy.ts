/**
 * A service task's restart policy: at most `attempts` restarts within the window `interval`, each
 * after an exponentially growing delay, reset by a run that lasted `resetAfter`.
 */
import type { RestartPolicySpec } from '../../../domain/scheduler/index.js';
import type { TaskRecord } from '../driver-state.js';

/** The window of restart attempts of a policy that sets no `interval`. */
export const DEFAULT_RESTART_WINDOW_MS = 30 * 60_000;

/** True while the policy allows one more restart; records it in the task's window. */
export function mayRestart(task: TaskRecord, policy: RestartPolicySpec): boolean {
  const now = Date.now();
  const window = policy.interval?.milliseconds ?? DEFAULT_RESTART_WINDOW_MS;
  task.recentRestarts = (task.recentRestarts ?? []).filter((at) => now - at < window);
  if (policy.attempts !== undefined && task.recentRestarts.length >= policy.attempts) return false;
  task.recentRestarts.push(now);
  return true;
}

/** The delays of one allocation's consecutive restarts. */
export class RestartBackoff {
  #failureStreak = 0;

  /** The delay before the next restart of a run that started at `runStartedMs`. */
  next(policy: RestartPolicySpec, runStartedMs: number): number {
    if (Date.now() - runStartedMs >= policy.resetAfter.milliseconds) this.#failureStreak = 0;
    const delay = Math.min(policy.initialDelay.milliseconds * 2 ** this.#failureStreak, policy.maxDelay.milliseconds);
    this.#failureStreak += 1;
    return delay;
  }
}
