/**
 * `--stalls` of bench (a): what holds the server's event loop during the busy retrieve probe
 * (docs/adr/0205). A 1 ms sentinel timer marks every gap of the loop longer than `minMs`; the
 * inspector's sampling profiler (in this thread, 100 µs) and the `gc` performance entries say what
 * ran inside each gap. Prints the longest gaps with their largest shares, grouped by our own
 * innermost frame (file and function) and GC.
 */
import { Session } from 'node:inspector/promises';
import { PerformanceObserver, performance } from 'node:perf_hooks';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: number[];
}
interface Profile {
  readonly nodes: ProfileNode[];
  readonly startTime: number;
  readonly samples: number[];
  readonly timeDeltas: number[];
}

/** A recorder started before the busy probe; `stop` prints the longest stalls. */
export async function startStallRecorder(minMs = 4): Promise<{ stop: (top?: number) => Promise<void> }> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  const gcs: { start: number; ms: number; kind: number }[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      gcs.push({
        start: e.startTime,
        ms: e.duration,
        kind: (e as unknown as { detail: { kind: number } }).detail.kind,
      });
  });
  observer.observe({ entryTypes: ['gc'] });
  // The profile's clock is microseconds of the monotonic clock; performance.now() is ms from timeOrigin.
  await session.post('Profiler.start');
  // The sentinel starts after the profiler, whose start is not the server's stall.
  const gaps: { from: number; to: number }[] = [];
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    if (now - last > minMs) gaps.push({ from: last, to: now });
    last = now;
  }, 1);
  return {
    async stop(top = 5) {
      clearInterval(timer);
      observer.disconnect();
      const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: Profile };
      session.disconnect();
      const origin = performance.timeOrigin * 1000; // µs, wall clock
      // Map the profile's monotonic microseconds to performance.now(): the first sample is near Profiler.start.
      const byId = new Map(profile.nodes.map((n) => [n.id, n]));
      const parent = new Map<number, number>();
      for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
      const label = (id: number): string => {
        const self = byId.get(id)!.callFrame;
        if (self.functionName === '(garbage collector)') return 'GC';
        if (self.functionName === '(idle)') return 'idle';
        if (self.functionName === '(program)') return '(program)';
        for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) {
          const f = byId.get(n)!.callFrame;
          if (f.url.startsWith('file://') && !f.url.includes('node_modules') && !f.url.includes('/bench/'))
            return `${f.url.replace(/^.*\/(\w+\/[\w-]+\.ts)$/, '$1')}:${f.functionName || '(anon)'} [${self.functionName || '(anon)'}]`;
        }
        return `${self.url.replace(/^.*node_modules\//, '').slice(0, 60)}:${self.functionName || '(anon)'}`;
      };
      const t: number[] = [];
      let at = profile.startTime;
      for (const d of profile.timeDeltas) t.push((at += d));
      // Align: profile times are monotonic µs; performance.now() is monotonic ms since timeOrigin's monotonic mark.
      const shift = hrtimeShift();
      void origin;
      gaps.sort((a, b) => b.to - b.from - (a.to - a.from));
      console.log(
        `    longest event-loop stalls during the busy probe (${gaps.length} gaps > ${minMs} ms; 1 ms sentinel, 100 us samples):`,
      );
      for (const g of gaps.slice(0, top)) {
        const counts = new Map<string, number>();
        let n = 0;
        for (let i = 0; i < t.length; i++) {
          const ms = t[i]! / 1000 - shift;
          if (ms < g.from || ms > g.to) continue;
          const l = label(profile.samples[i]!);
          counts.set(l, (counts.get(l) ?? 0) + 1);
          n++;
        }
        const gcIn = gcs.filter((e) => e.start + e.ms > g.from && e.start < g.to);
        const parts = [...counts]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 4)
          .map(([l, c]) => `${l} ${Math.round((100 * c) / Math.max(1, n))}%`)
          .join('; ');
        console.log(
          `      ${(g.to - g.from).toFixed(1)} ms: ${parts}${gcIn.length ? `; gc events ${gcIn.map((e) => `${GC_KINDS[e.kind] ?? e.kind} ${e.ms.toFixed(1)} ms`).join(', ')}` : ''}`,
        );
      }
      const scav = gcs.filter((e) => e.kind === 1);
      const major = gcs.filter((e) => e.kind !== 1);
      const sum = (es: typeof gcs) => es.reduce((s, e) => s + e.ms, 0).toFixed(1);
      console.log(
        `      gc during the probe: ${scav.length} scavenges (${sum(scav)} ms, max ${Math.max(0, ...scav.map((e) => e.ms)).toFixed(1)}), ${major.length} others (${sum(major)} ms, max ${Math.max(0, ...major.map((e) => e.ms)).toFixed(1)})`,
      );
    },
  };
}

const GC_KINDS: Record<number, string> = { 1: 'scavenge', 2: 'mark-compact', 4: 'incremental', 8: 'weak-cb' };

/** performance.now() = monotonic ms − shift. */
function hrtimeShift(): number {
  const mono = Number(process.hrtime.bigint()) / 1e6;
  return mono - performance.now();
}
