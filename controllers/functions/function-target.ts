/**
 * What an invocation runs: the app's function process it names (or its only one), and the running
 * parameterized batch job the app controller submitted for that process, in the primary region
 * when it runs in several.
 */
import { ConflictError, NotFoundError, UnprocessableError, ValidationError } from '../../domain/errors.js';
import type { JobStatus, Scheduler } from '../../domain/scheduler/index.js';
import { ProcessType, type CanonicalAppSpec } from '../../domain/spec/index.js';
import type { SchedulerTargets } from '../apps/scheduler-targets.js';

/** The running job of a function process, with its region and scheduler. */
export interface FunctionJob {
  readonly region: string;
  readonly scheduler: Scheduler;
  readonly job: JobStatus;
}

/** The function processes of a spec, by name. */
export function functionProcesses(spec: CanonicalAppSpec): string[] {
  return Object.keys(spec.processes)
    .filter((name) => spec.processes[name]!.type === ProcessType.function)
    .sort();
}

/** The function process an invocation names, or the app's only one when it names none. */
export function functionProcessOf(app: string, spec: CanonicalAppSpec, process: string | undefined): string {
  const functions = functionProcesses(spec);
  if (process === undefined) {
    if (functions.length === 0)
      throw new UnprocessableError(`app "${app}" has no function process`, {
        code: 'no_function_process',
        details: { app },
      });
    if (functions.length > 1) {
      throw new ValidationError(
        `app "${app}" has several function processes; name one with the process form {"process": ..., "body": ...}`,
        { code: 'process_required', details: { processes: functions } },
      );
    }
    return functions[0]!;
  }
  const found = spec.processes[process];
  if (!found)
    throw new NotFoundError(`app "${app}" has no process "${process}"`, {
      code: 'process_not_found',
      details: { app, process, functions },
    });
  if (found.type !== ProcessType.function) {
    throw new UnprocessableError(
      `${app}/${process} is a ${found.type} process, not a function (set processes.${process}.function to make it one)`,
      {
        code: 'not_a_function',
        details: { app, process, type: found.type, functions },
      },
    );
  }
  return process;
}

/** The running batch job of the function; the primary region's when it runs in several. */
export async function functionJobOf(
  targets: SchedulerTargets,
  app: string,
  spec: CanonicalAppSpec,
  process: string,
): Promise<FunctionJob> {
  const found: FunctionJob[] = [];
  for (const { region, scheduler } of await targets.all()) {
    for (const job of await scheduler.listJobs({ app })) {
      if (
        job.spec.type === 'batch' &&
        job.spec.parameterized &&
        job.status === 'running' &&
        job.spec.meta?.['svc.process'] === process
      )
        found.push({ region, scheduler, job });
    }
  }
  if (found.length === 0) {
    throw new ConflictError(`${app}/${process} is not deployed: no running function job (deploy the app first)`, {
      code: 'function_not_deployed',
      details: { app, process },
    });
  }
  const regionOf = (entry: FunctionJob) => entry.job.spec.meta?.['svc.region'] ?? entry.region;
  found.sort((a, b) => (regionOf(a) < regionOf(b) ? -1 : regionOf(a) > regionOf(b) ? 1 : 0));
  return found.find((entry) => regionOf(entry) === spec.primaryRegion) ?? found[0]!;
}
