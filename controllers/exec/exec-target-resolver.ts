/**
 * Which allocation an exec runs in: a running allocation of the app (of `process` when given, else
 * `web` when it has one, else the first), with a live task process. Unknown app: 404; no running
 * allocation: 409 naming the app's state.
 */
import type { Allocation } from '../../domain/scheduler/index.js';
import { ConflictError, NotFoundError, UnprocessableError } from '../../domain/errors.js';
import type { Db } from '../../store/database.js';
import { getApp } from '../../store/control/apps.js';
import type { SchedulerTargets } from '../apps/scheduler-targets.js';

/** The app's state in words, for the 409 answer. */
function stateOf(
  app: NonNullable<ReturnType<typeof getApp>>,
  allocations: readonly Allocation[],
  process: string | undefined,
): string {
  if (app.spec === null) return 'its spec has not been read (see its findings)';
  if (!app.spec.deploy) return 'not deployed (deploy: false)';
  if (app.release === null) return 'no release yet (deploy it first)';
  const own = allocations.filter((a) => process === undefined || a.taskGroup === process);
  if (own.length === 0) return process === undefined ? 'no allocations' : `no allocations of process "${process}"`;
  const counts = new Map<string, number>();
  for (const a of own) counts.set(a.status, (counts.get(a.status) ?? 0) + 1);
  return [...counts].map(([status, n]) => `${n} ${status}`).join(', ');
}

/** Finds the allocation to exec in. */
export async function resolveExecAllocation(
  db: Db,
  targets: SchedulerTargets,
  appName: string,
  process: string | undefined,
): Promise<Allocation> {
  const app = getApp(db, appName);
  if (app === undefined)
    throw new NotFoundError(`app "${appName}" is not discovered under the apps folder`, {
      code: 'app_not_found',
      details: { app: appName },
    });
  if (process !== undefined && app.spec !== null && app.spec.processes[process] === undefined)
    throw new NotFoundError(`app "${appName}" has no process "${process}"`, {
      code: 'process_not_found',
      details: { app: appName, process, processes: Object.keys(app.spec.processes) },
    });
  const allocations: Allocation[] = [];
  for (const { scheduler } of await targets.all())
    allocations.push(...(await scheduler.listAllocations({ app: appName })));
  const running = allocations
    .filter((a) => a.status === 'running' && a.kind === 'group')
    .filter((a) => process === undefined || a.taskGroup === process)
    .sort((a, b) => (a.taskGroup === 'web' ? 0 : 1) - (b.taskGroup === 'web' ? 0 : 1) || a.index - b.index);
  const chosen = running[0];
  if (chosen === undefined) {
    const state = stateOf(app, allocations, process);
    throw new ConflictError(
      `app "${appName}" has no running allocation${process === undefined ? '' : ` of process "${process}"`}: ${state}`,
      { code: 'no_running_allocation', details: { app: appName, ...(process ? { process } : {}), state } },
    );
  }
  if (chosen.task.pid === undefined)
    throw new UnprocessableError(
      `allocation ${chosen.id} of app "${appName}" has no host process: exec is served on the local driver only`,
      { code: 'exec_not_supported', details: { app: appName, allocation: chosen.id } },
    );
  return chosen;
}
