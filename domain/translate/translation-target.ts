/**
 * Translation targets and job naming: where an app's jobs go (each region of the spec, or the one local
 * target) and what they are called there.
 */
import type { CanonicalAppSpec, CanonicalProcess } from '../spec/index.js';
import type { TranslationWarning } from './translation.js';
import { TranslationDefaults } from './translation-defaults.js';

/** One place an app's jobs are submitted to. */
export interface TranslationTarget {
  /** Region key of the spec, or `local` for a spec without regions. */
  readonly name: string;
  /** Scheduler region the jobs target (the RegionTarget's schedulerRegion, or `local`). */
  readonly schedulerRegion: string;
  readonly datacenters: readonly string[];
  /** True for a region declared by the spec: job ids get the `@<region>` suffix and `per_region` applies. */
  readonly regional: boolean;
  /** True for a region of `trafficWeight: 0`: deployed and health-checked, sent no traffic. */
  readonly standby: boolean;
}

/**
 * The targets of a spec, sorted by name, limited to `selected` when given. A selected name that is not a
 * target of the spec is ignored with a warning.
 */
export function translationTargets(
  spec: CanonicalAppSpec,
  selected?: readonly string[],
  warnings: TranslationWarning[] = [],
): TranslationTarget[] {
  const names = Object.keys(spec.regions).sort();
  const all: TranslationTarget[] =
    names.length === 0
      ? [
          {
            name: TranslationDefaults.localRegion,
            schedulerRegion: TranslationDefaults.localRegion,
            datacenters: [...TranslationDefaults.localDatacenters],
            regional: false,
            standby: false,
          },
        ]
      : names.map((name) => {
          const target = spec.regions[name]!;
          return {
            name,
            schedulerRegion: target.schedulerRegion,
            datacenters: [...target.datacenters],
            regional: true,
            standby: target.trafficWeight === 0,
          };
        });
  if (selected === undefined) return all;
  const known = all.map((target) => target.name);
  for (const name of selected) {
    if (!known.includes(name)) {
      warnings.push({
        path: 'regions',
        message: `${JSON.stringify(name)} was selected but is not a target of this app (targets: ${known.join(', ')}); it is ignored`,
      });
    }
  }
  if (selected.length === 0)
    warnings.push({ path: 'regions', message: 'no region is selected; the translation has no jobs' });
  return all.filter((target) => selected.includes(target.name));
}

/**
 * The id of a job: `<app>` for the service job, `<app>-<process>` for a periodic or function job, with
 * `@<region>` appended on a regional target. `@` appears in neither app nor process names, so ids of
 * different targets and processes never collide.
 */
export function jobId(app: string, process: string | undefined, target: TranslationTarget): string {
  const base = process === undefined ? app : `${app}-${process}`;
  return target.regional ? `${base}@${target.name}` : base;
}

/** The source path of a job's scheduler variables: `scheduler/jobs/<job id>`; the spec cannot choose it. */
export function schedulerVariablesPath(id: string): string {
  return `scheduler/jobs/${id}`;
}

/** True when the process runs on the target: every process on the local target, else its canonical regions. */
export function placedOn(process: CanonicalProcess, target: TranslationTarget): boolean {
  return !target.regional || process.regions.includes(target.name);
}

/**
 * Allocation count of a long-running process on a target: `scaling.per_region` on a regional target
 * when set, else `scaling.min`.
 */
export function allocationCount(process: CanonicalProcess, target: TranslationTarget): number {
  return target.regional && process.scaling.per_region !== undefined ? process.scaling.per_region : process.scaling.min;
}
