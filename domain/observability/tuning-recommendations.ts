/**
 * Advisory tuning: a resource recommendation per running process, derived from its right-sizing
 * class (peak RSS against the memory limit) and bounded by the process's TuningPolicy (profiles,
 * limits). Recommendations are reports only: nothing here changes a job or a spec.
 */
import type { CanonicalProcess } from '../spec/index.js';

/** Metrics every source can give from the driver's samples of the allocations (ADR 0233). */
export const BUILT_IN_SIGNAL_METRICS: ReadonlySet<string> = new Set(['cpu_percent', 'memory_rss', 'memory_max']);

/** What the control plane read for one signal of a process: its aggregate over the window, or why not. */
export type SignalRead =
  { readonly value: number; readonly samples: number } | { readonly value?: undefined; readonly missing: string };

/** Right-sizing classes of `GET /api/resources/suggestions`. */
export const SizingStatus = {
  atRisk: 'at_risk',
  rightSized: 'right_sized',
  overprovisioned: 'overprovisioned',
} as const;
export type SizingStatus = (typeof SizingStatus)[keyof typeof SizingStatus];

/** Recommended change of the memory limit. */
export const TuningAction = { raiseMemory: 'raise_memory', lowerMemory: 'lower_memory', keep: 'keep' } as const;
export type TuningAction = (typeof TuningAction)[keyof typeof TuningAction];

/** Share of the limit a raised limit should leave the peak at (the suggestions' "under 70%"). */
export const RAISE_TO_PEAK_SHARE = 0.7;
/** Share of the limit a lowered limit should leave the peak at. */
export const LOWER_TO_PEAK_SHARE = 0.6;
/** Smallest memory limit recommended, in MB. */
export const MIN_MEMORY_MB = 16;

/** One classified running process, as `GET /api/resources/suggestions` reports it. */
export interface SizingObservation {
  readonly app: string;
  readonly process: string;
  readonly region: string;
  readonly allocations: number;
  readonly peakMemoryMb: number;
  readonly memoryLimitMb: number;
  readonly usagePercent: number | null;
  readonly status: SizingStatus;
}

/** cpu (MHz), memory (MB) and allocation count. */
export interface ResourceShape {
  readonly cpu: number;
  readonly memory: number;
  readonly scale: number;
}

/** A signal of the policy and whether the recommendation could read it. */
export interface SignalUse {
  readonly name: string;
  readonly source: string;
  readonly metric: string;
  readonly aggregate: string | null;
  readonly window: string | null;
  readonly used: boolean;
  /** The aggregate over the window, when the signal was read. */
  readonly value: number | null;
  /** Samples the aggregate is over. */
  readonly samples: number;
  readonly note: string;
}

/** The advisory recommendation for one process. */
export interface TuningRecommendation {
  readonly app: string;
  readonly process: string;
  readonly region: string;
  readonly status: SizingStatus;
  readonly observed: {
    readonly allocations: number;
    readonly peakMemoryMb: number;
    readonly usagePercent: number | null;
  };
  readonly current: ResourceShape;
  readonly recommended: ResourceShape & { readonly profile: string | null };
  readonly action: TuningAction;
  /** Always advisory: `auto` is reserved and reported only. */
  readonly mode: 'advisory';
  /** Always false: recommendations are never applied. */
  readonly applied: false;
  readonly policy: {
    readonly declared: boolean;
    readonly mode: string;
    readonly cooldown: string | null;
    readonly profiles: readonly string[];
  };
  readonly signals: readonly SignalUse[];
  readonly notes: readonly string[];
}

/** The built-in signal: the scheduler's peak RSS of running allocations. */
const BUILT_IN_SIGNAL: SignalUse = {
  name: 'memory_peak',
  source: 'nomad',
  metric: 'memory_max',
  aggregate: 'max',
  window: null,
  used: true,
  value: null,
  samples: 0,
  note: 'peak RSS of the running allocations (scheduler)',
};

/** The memory the peak calls for: raised to keep it under 70%, lowered to about 60%, else as is. */
export function memoryTargetMb(observation: SizingObservation): number {
  if (observation.status === SizingStatus.atRisk) return Math.ceil(observation.peakMemoryMb / RAISE_TO_PEAK_SHARE);
  if (observation.status === SizingStatus.overprovisioned)
    return Math.max(MIN_MEMORY_MB, Math.ceil(observation.peakMemoryMb / LOWER_TO_PEAK_SHARE));
  return observation.memoryLimitMb;
}

function signalUses(
  process: CanonicalProcess | undefined,
  readings: ReadonlyMap<string, SignalRead>,
  peakMemoryMb: number,
): SignalUse[] {
  const signals = process?.tuning?.signals;
  if (signals === undefined || signals.length === 0) return [BUILT_IN_SIGNAL];
  return signals.map((signal) => {
    const aggregate = signal.aggregate ?? 'current';
    const base = {
      name: signal.name,
      source: signal.source,
      metric: signal.metric,
      aggregate: signal.aggregate ?? null,
      window: signal.window ?? null,
    };
    if (signal.source === 'nomad' && !BUILT_IN_SIGNAL_METRICS.has(signal.metric))
      return { ...base, used: false, value: null, samples: 0, note: `the scheduler reports no live ${signal.metric}` };
    const read = readings.get(signal.name);
    // The scheduler's memory signals fall back to the peak the sizing observed.
    if (
      (read === undefined || read.value === undefined) &&
      signal.source === 'nomad' &&
      signal.metric !== 'cpu_percent'
    )
      return {
        ...base,
        used: true,
        value: peakMemoryMb,
        samples: 0,
        note: 'read as the peak RSS of the running allocations',
      };
    if (read === undefined || read.value === undefined)
      return {
        ...base,
        used: false,
        value: null,
        samples: 0,
        note: read?.missing ?? `no ${signal.metric} sample yet`,
      };
    const from = BUILT_IN_SIGNAL_METRICS.has(signal.metric)
      ? "the driver's samples of the running allocations"
      : "the process's metrics endpoint, averaged over its allocations";
    const value = Math.round(read.value * 10) / 10;
    return {
      ...base,
      used: true,
      value,
      samples: read.samples,
      note: `${aggregate} of ${signal.metric} over ${signal.window ?? 'the kept history'} (${read.samples} samples from ${from}): ${value}`,
    };
  });
}

function clamp(value: number, min: number | undefined, max: number | undefined): number {
  return Math.min(max ?? Number.POSITIVE_INFINITY, Math.max(min ?? Number.NEGATIVE_INFINITY, value));
}

/** The recommendation for `observation`, bounded by the policy of `process` (its spec, when known). */
export function recommendTuning(
  observation: SizingObservation,
  process: CanonicalProcess | undefined,
  readings: ReadonlyMap<string, SignalRead> = new Map(),
): TuningRecommendation {
  const policy = process?.tuning;
  const current: ResourceShape = {
    cpu: process?.resources.cpu ?? 0,
    memory: observation.memoryLimitMb,
    scale: process?.scaling.min ?? observation.allocations,
  };
  const notes: string[] = [];
  const target = memoryTargetMb(observation);
  let recommended = { ...current, memory: target };
  let profile: string | null = null;

  const profiles = Object.entries(policy?.profiles ?? {})
    .flatMap(([name, p]) => (p?.memory === undefined ? [] : [{ name, cpu: p.cpu, memory: p.memory, scale: p.scale }]))
    .sort((a, b) => a.memory - b.memory || a.name.localeCompare(b.name));
  if (observation.status !== SizingStatus.rightSized && profiles.length > 0) {
    const fit = profiles.find((p) => p.memory >= target) ?? profiles[profiles.length - 1]!;
    if (fit.memory < target)
      notes.push(`no profile holds ${target} MB; the largest, ${fit.name} (${fit.memory} MB), is the closest`);
    profile = fit.name;
    recommended = { cpu: fit.cpu ?? current.cpu, memory: fit.memory, scale: fit.scale ?? current.scale };
  }

  const min = policy?.limits?.min;
  const max = policy?.limits?.max;
  const bounded = {
    cpu: clamp(recommended.cpu, min?.cpu, max?.cpu),
    memory: clamp(recommended.memory, min?.memory, max?.memory),
    scale: clamp(recommended.scale, min?.scale, max?.scale),
  };
  if (bounded.memory < recommended.memory) {
    notes.push(
      `limits.max.memory (${max?.memory} MB) caps the ${recommended.memory} MB the peak calls for${observation.status === SizingStatus.atRisk ? '; the process stays at risk of OOM kills' : ''}`,
    );
  }
  if (bounded.memory > recommended.memory)
    notes.push(
      `limits.min.memory (${min?.memory} MB) keeps the limit above the ${recommended.memory} MB the peak calls for`,
    );
  if (bounded.cpu !== recommended.cpu) notes.push(`cpu bounded by limits to ${bounded.cpu} MHz`);
  if (bounded.scale !== recommended.scale) notes.push(`scale bounded by limits to ${bounded.scale}`);
  if (policy?.mode === 'auto') notes.push('tuning.mode auto is reserved for future guarded application: reported only');
  if (profile === null) notes.push('cpu and scale have no live signal and are left as they are');

  const action =
    bounded.memory > current.memory
      ? TuningAction.raiseMemory
      : bounded.memory < current.memory
        ? TuningAction.lowerMemory
        : TuningAction.keep;
  return {
    app: observation.app,
    process: observation.process,
    region: observation.region,
    status: observation.status,
    observed: {
      allocations: observation.allocations,
      peakMemoryMb: observation.peakMemoryMb,
      usagePercent: observation.usagePercent,
    },
    current,
    recommended: { ...bounded, profile },
    action,
    mode: 'advisory',
    applied: false,
    policy: {
      declared: policy !== undefined,
      mode: policy?.mode ?? 'advisory',
      cooldown: policy?.cooldown ?? null,
      profiles: profiles.map((p) => p.name),
    },
    signals: signalUses(process, readings, observation.peakMemoryMb),
    notes,
  };
}
