/**
 * bench/containers, phase 3: cold wakes of `hello-cold` through the wake gateway, one plane after
 * the other in turn (the order reversed every other round), each after the process was scaled to
 * zero. The app reports when node started and when it listened; the overhead of a wake is its
 * response time minus that boot time.
 */
import type { LocalScheduler } from '../../platform/local-scheduler/index.js';
import { get } from './http-get.js';
import { percentile } from './bench-args.js';
import type { Side } from './container-bench-fixture.js';

/** One wake: response time, the app's boot, request to node's start, listening to response (ms). */
export interface WakeRow {
  readonly total: number;
  readonly boot: number;
  readonly beforeNode: number;
  readonly afterListen: number;
}

type WaitUntil = (check: () => Promise<boolean>, what: string) => Promise<void>;

const TERMINAL = new Set(['complete', 'failed', 'lost']);
const epochNow = () => performance.timeOrigin + performance.now();
const p50 = (xs: readonly number[]) => (xs.length === 0 ? NaN : percentile(xs, 50));

/** Scales hello-cold to zero (the idle sweep, two hours on) and waits until nothing of it runs. */
async function toZero(name: string, side: Side, waitUntil: WaitUntil): Promise<void> {
  const plane = side.plane!;
  const scheduler = await plane.reconcilers.targets.get();
  await plane.routing.idle.sweep(Date.now() + 2 * 3_600_000);
  await waitUntil(
    async () =>
      (await plane.reconcilers.registry.instances('hello-cold-web')).length === 0 &&
      (await scheduler.listAllocations({ app: 'hello-cold', includeTerminal: true })).every((a) =>
        TERMINAL.has(a.status),
      ),
    `${name} hello-cold to scale to zero`,
  );
  await plane.reconcilers.whenIdle();
  await plane.routing.controller.whenIdle();
  // The container of the next wake is created once the process reached zero (ADR 0228).
  await (scheduler as Partial<LocalScheduler>).preparedSettled?.();
}

/** `wakes` rounds of one cold wake per plane of `sides`, recorded in `rows` by the plane's name. */
export async function wakeInTurn<K extends string>(
  sides: Record<K, Side>,
  wakes: number,
  rows: Record<K, WakeRow[]>,
  waitUntil: WaitUntil,
): Promise<void> {
  const names = Object.keys(sides) as K[];
  for (const name of names) {
    const plane = sides[name].plane!;
    await waitUntil(
      () => Promise.resolve(plane.routing.gateway.resolve('cold.example.test')?.released === true),
      `${name} gateway route of cold.example.test`,
    );
  }
  for (let i = 0; i < wakes; i += 1) {
    for (const name of i % 2 === 0 ? names : [...names].reverse()) {
      const side = sides[name];
      await toZero(name, side, waitUntil);
      const sentAt = epochNow();
      const started = performance.now();
      const response = await get(`${side.plane!.url}/`, 'cold.example.test');
      const total = performance.now() - started;
      const answeredAt = epochNow();
      if (response.status !== 200)
        throw new Error(`${name} wake ${i + 1}: HTTP ${response.status} ${response.body.slice(0, 500)}`);
      const body = JSON.parse(response.body) as { startedAt: number; readyAt: number };
      rows[name].push({
        total,
        boot: body.readyAt - body.startedAt,
        beforeNode: body.startedAt - sentAt,
        afterListen: answeredAt - body.readyAt,
      });
    }
  }
}

/** The line that describes a plane's wakes. */
export function describeWakes(rows: readonly WakeRow[]): string {
  return ` (${rows.length} wakes): response p50 ${p50(rows.map((r) => r.total)).toFixed(1)} ms; app boot (node start to listening) p50 ${p50(rows.map((r) => r.boot)).toFixed(1)} ms; overhead (response minus boot) p50 ${p50(rows.map((r) => r.total - r.boot)).toFixed(1)} ms, max ${Math.max(...rows.map((r) => r.total - r.boot)).toFixed(1)} ms; of which request to node's start p50 ${p50(rows.map((r) => r.beforeNode)).toFixed(1)} ms, listening to response p50 ${p50(rows.map((r) => r.afterListen)).toFixed(1)} ms`;
}
