/**
 * Spec-to-job translation: a canonical app spec and a release become the scheduler jobs of the app,
 * one per (target, job type). Pure and deterministic, so its output is golden-tested.
 */
import { JobType, type JobSpec, type TaskGroupSpec } from '../scheduler/index.js';
import { ProcessType, type CanonicalAppSpec, type CanonicalProcess } from '../spec/index.js';
import { infrastructureEnvironment } from './infrastructure-environment.js';
import { processTaskGroup, type TaskGroupContext } from './process-task-group.js';
import type { Translation, TranslationInput, TranslationWarning } from './translation.js';
import { JobMetaKey } from './translation-defaults.js';
import {
  jobId,
  placedOn,
  schedulerVariablesPath,
  translationTargets,
  type TranslationTarget,
} from './translation-target.js';

interface JobParts {
  readonly id: string;
  readonly type: JobType;
  readonly process?: string;
  readonly groups: Array<{ name: string; process: CanonicalProcess }>;
}

function uniqueWarnings(warnings: readonly TranslationWarning[]): TranslationWarning[] {
  const seen = new Set<string>();
  return warnings.filter((warning) => {
    const key = `${warning.path}\u0000${warning.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function jobsOfTarget(spec: CanonicalAppSpec, target: TranslationTarget): JobParts[] {
  const processes = Object.keys(spec.processes)
    .sort()
    .map((name) => ({ name, process: spec.processes[name]! }))
    .filter(({ process }) => placedOn(process, target));
  const parts: JobParts[] = [];
  const longRunning = processes.filter(
    ({ process }) => process.type === ProcessType.service || process.type === ProcessType.worker,
  );
  if (longRunning.length > 0)
    parts.push({ id: jobId(spec.name, undefined, target), type: JobType.service, groups: longRunning });
  for (const entry of processes) {
    if (entry.process.type === ProcessType.periodic) {
      parts.push({
        id: jobId(spec.name, entry.name, target),
        type: JobType.periodic,
        process: entry.name,
        groups: [entry],
      });
    } else if (entry.process.type === ProcessType.function) {
      parts.push({
        id: jobId(spec.name, entry.name, target),
        type: JobType.batch,
        process: entry.name,
        groups: [entry],
      });
    }
  }
  return parts;
}

/**
 * Translates a canonical app spec into scheduler jobs for the selected targets (see
 * docs/adr/0060-spec-to-job-translation.md):
 *
 * - a `service` job `<app>` with one task group per service and worker process;
 * - a `periodic` job `<app>-<process>` per scheduled process;
 * - a parameterized `batch` job `<app>-<process>` per function process;
 *
 * with `@<region>` appended to every id when the spec declares regions. Jobs are sorted by id, task groups
 * by process name, environment by key. Job meta holds `svc.app`, `svc.commit`, `svc.region`,
 * `svc.process` (periodic and function jobs) and the scheduler variable keys; the caller adds the
 * deployment generation. Problems that do not stop the translation are returned as warnings.
 */
export function translateApp(spec: CanonicalAppSpec, input: TranslationInput): Translation {
  const warnings: TranslationWarning[] = [];
  const infrastructureEnv = infrastructureEnvironment(spec, input.infrastructure, warnings);
  const jobs: JobSpec[] = [];
  for (const target of translationTargets(spec, input.regions, warnings)) {
    for (const parts of jobsOfTarget(spec, target)) {
      const variablesPath = schedulerVariablesPath(parts.id);
      const ctx: TaskGroupContext = {
        spec,
        input,
        target,
        jobId: parts.id,
        variablesPath,
        infrastructureEnv,
        warnings,
      };
      const groups: TaskGroupSpec[] = [];
      const missing = new Set<string>();
      for (const { name, process } of parts.groups) {
        const translated = processTaskGroup(ctx, name, process);
        groups.push(translated.group);
        for (const key of translated.missingVariables) missing.add(key);
      }
      const meta: Record<string, string> = {
        [JobMetaKey.app]: spec.name,
        [JobMetaKey.commit]: input.release.commit,
        [JobMetaKey.region]: target.name,
      };
      if (parts.process !== undefined) meta[JobMetaKey.process] = parts.process;
      if (parts.groups.some(({ process }) => process.schedulerVariables !== undefined))
        meta[JobMetaKey.schedulerVariablesPath] = variablesPath;
      if (missing.size > 0) meta[JobMetaKey.missingSchedulerVariables] = [...missing].sort().join(',');
      const process = parts.groups[0]?.process;
      jobs.push({
        id: parts.id,
        app: spec.name,
        type: parts.type,
        region: target.schedulerRegion,
        datacenters: [...target.datacenters],
        ...(spec.placement?.nodePool !== undefined ? { nodePool: spec.placement.nodePool } : {}),
        taskGroups: groups,
        ...(parts.type === JobType.periodic && process?.schedule !== undefined
          ? {
              periodic: {
                cron: process.schedule,
                ...(process.timezone !== undefined ? { timeZone: process.timezone } : {}),
              },
            }
          : {}),
        ...(parts.type === JobType.batch ? { parameterized: { payload: 'optional' as const } } : {}),
        meta: Object.fromEntries(Object.entries(meta).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
      });
    }
  }
  jobs.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { jobs, warnings: uniqueWarnings(warnings) };
}
