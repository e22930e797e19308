/**
 * bench/spawn-spare: the start of one task through the spawner helper (ADR 0199) into its own CPU
 * weight cgroup, with a spare process that joined the group ahead (ADR 0201) and without, alternated
 * in one process. Prints, per kind, the time from the request to the helper's answer (the task exec'd)
 * and to the task's exit (`/bin/true`), p50 and p10, and the control plane's CPU per start.
 * Needs a writable cgroup cpu controller (root); without one both kinds are the same path.
 *
 * Run: node --import tsx bench/spawn-spare.ts [--starts N]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { detectCpuWeights } from '../platform/local-scheduler/tasks/cpu-weight.js';
import { TaskSpawner } from '../platform/local-scheduler/tasks/task-spawner.js';
import { arg, percentile } from './lib/bench-args.js';

const starts = arg('starts', 40);
const weights = detectCpuWeights();
if (weights.kind === 'none') console.log(`no cgroup weights here (${weights.reason}): both kinds take the same path`);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-spare-'));
const spawner = TaskSpawner.start();
if (spawner === undefined) throw new Error('perl is needed for the spawner helper');
spawner.keepSpares(1, (id) => weights.target(id, 100)?.group);
const rows = {
  spare: { answer: [] as number[], exit: [] as number[] },
  fresh: { answer: [] as number[], exit: [] as number[] },
};
const ids: string[] = [];
// The helper's pipes do not keep this process alive while a task's exit is awaited.
const keepAlive = setInterval(() => undefined, 1000);
try {
  // A spare needs its own join to finish before it saves anything: one start per 50 ms, as wakes come.
  for (let i = 0; i < 2 * starts; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const kind = i % 2 === 0 ? 'spare' : 'fresh';
    const id = (kind === 'spare' ? spawner.takeSpare() : undefined) ?? crypto.randomUUID();
    ids.push(id);
    const cgroup = weights.target(id, 100);
    const began = performance.now();
    let exited!: () => void;
    const exit = new Promise<void>((resolve) => (exited = resolve));
    await spawner.spawn(
      {
        file: '/bin/true',
        args: [],
        cwd: dir,
        env: { PATH: '/usr/bin:/bin' },
        stdoutPath: path.join(dir, 'out.log'),
        stderrPath: path.join(dir, 'err.log'),
        ...(cgroup ? { cgroup } : {}),
      },
      { exit: () => exited(), lost: () => exited() },
    );
    rows[kind].answer.push(performance.now() - began);
    await exit;
    rows[kind].exit.push(performance.now() - began);
  }
  for (const [kind, { answer, exit }] of Object.entries(rows))
    console.log(
      `${kind === 'spare' ? 'spare joined ahead' : 'joins at start   '}: answered p50 ${percentile(answer, 50).toFixed(2)} ms (p10 ${percentile(answer, 10).toFixed(2)}), exited p50 ${percentile(exit, 50).toFixed(2)} ms (p10 ${percentile(exit, 10).toFixed(2)}), ${answer.length} starts`,
    );
  console.log(
    `load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
} finally {
  clearInterval(keepAlive);
  spawner.close();
  for (const id of [...ids, ...spawner.unusedSpares()]) weights.release(id);
  fs.rmSync(dir, { recursive: true, force: true });
}
