/**
 * Recovery: what a new driver instance does with the allocations a previous one left: re-adopt
 * live processes (same pid and start time), start never-started ones, mark vanished ones lost and
 * replace those of service jobs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AllocationRunner } from './allocation-runner.js';
import { isTerminal, type DriverCore } from '../driver-core.js';
import { isProcessAlive, listProcesses, readEnvironment } from '../tasks/process-table.js';
import { removeContainer } from '../containers/container-exit.js';

/** `SVC_ALLOC_ID` of a live process started by a driver on `allocsDir`, read from its environment. */
function allocationOf(pid: number, allocsDir: string): string | undefined {
  const environment = readEnvironment(pid);
  const dir = environment?.get('SVC_ALLOC_DIR');
  return dir !== undefined && dir.startsWith(allocsDir) ? environment?.get('SVC_ALLOC_ID') : undefined;
}

/** The pid namespace of `pid` (`pid:[inode]`), or undefined once it is gone. */
function pidNamespace(pid: number | 'self'): string | undefined {
  try {
    return fs.readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return undefined;
  }
}

/**
 * Finds processes a previous driver spawned but had not yet recorded (killed between spawn and the
 * state write): each carries its allocation id in its environment. A process whose allocation is
 * known and unstarted is adopted by recording its pid; any other untracked one is killed, so a
 * crash never leaves an unsupervised app process behind. Returns how many were killed.
 */
export function sweepUnrecordedProcesses(core: DriverCore): { adopted: number; killed: number; killedIds: string[] } {
  const allocsDir = path.join(core.options.dataDir, 'allocs') + path.sep;
  const table = listProcesses();
  const tracked = new Set(
    core
      .records()
      .map((r) => r.task.pid)
      .filter((pid): pid is number => pid !== undefined),
  );
  let adopted = 0;
  let killed = 0;
  const killedIds: string[] = [];
  const ownNamespace = pidNamespace('self');
  for (const info of table) {
    if (info.state === 'Z' || tracked.has(info.pid) || tracked.has(info.pgrp) || info.pid === process.pid) continue;
    const id = allocationOf(info.pid, allocsDir);
    if (id === undefined) continue;
    const record = core.state.allocations[id];
    // Only a group leader (spawned detached) can be an allocation's task; its children follow it.
    if (info.pgrp !== info.pid) continue;
    // A container's processes carry the app's variables too, each container's first one leading its
    // group; the task is the `podman run` on the host's side, and the container ends with it (ADR 0219).
    if (pidNamespace(info.pid) !== ownNamespace) continue;
    if (record && !isTerminal(record.status) && record.task.pid === undefined && record.desiredStatus === 'run') {
      record.task.pid = info.pid;
      record.task.pidStartTime = info.startTime;
      tracked.add(info.pid);
      adopted += 1;
      continue;
    }
    try {
      process.kill(-info.pid, 'SIGKILL');
      killed += 1;
      killedIds.push(id);
    } catch {
      // already gone
    }
    core.ctx.cpuWeights.release(id);
  }
  return { adopted, killed, killedIds };
}

/** Recovers every non-terminal allocation of the persisted state. */
export async function recoverAllocations(core: DriverCore): Promise<void> {
  const { killedIds, ...swept } = sweepUnrecordedProcesses(core);
  if (swept.adopted + swept.killed > 0)
    core.ctx.logger.warn(swept, 'processes started but not recorded by the previous driver: adopted or killed');
  // A killed `podman run` client leaves its container to conmon: it goes too (none for a host process).
  const containers = core.ctx.containers;
  if (containers) for (const id of killedIds) await removeContainer(containers, id).catch(() => undefined);
  for (const record of core.records()) {
    if (isTerminal(record.status)) continue;
    const job = core.state.jobs[record.jobId];
    const pid = record.task.pid;
    if (pid !== undefined && isProcessAlive(pid, record.task.pidStartTime)) {
      const runner = new AllocationRunner(record, core.ctx);
      core.runners.set(record.id, runner);
      runner.adopt();
      if (record.desiredStatus === 'stop') void runner.stop('stopped after re-adoption');
      continue;
    }
    // Placed but never spawned, or waiting out a restart delay when the previous driver stopped.
    if (pid === undefined && record.desiredStatus === 'run' && job?.status === 'running') {
      const runner = new AllocationRunner(record, core.ctx);
      core.runners.set(record.id, runner);
      void runner.start();
      continue;
    }
    const previous = record.status;
    const message =
      pid === undefined
        ? 'task was not running when the driver restarted'
        : `process ${pid} vanished while the driver was down`;
    const event = { type: 'Lost' as const, message, at: new Date().toISOString() };
    record.task.events.push(event);
    record.task.state = 'dead';
    record.task.pid = undefined;
    record.task.pidStartTime = undefined;
    record.status = record.desiredStatus === 'stop' ? 'complete' : 'lost';
    record.statusDescription = message;
    const wasWanted = record.desiredStatus === 'run';
    record.desiredStatus = 'stop';
    core.changed(record, previous, event);
    core.ctx.cpuWeights.release(record.id);
    const execution = record.executionId ? core.state.executions[record.executionId] : undefined;
    if (execution && execution.status === 'running') {
      execution.status = 'failed';
      execution.finishedAt = new Date().toISOString();
      execution.errorOutput = message;
    }
    if (wasWanted && job && job.status === 'running' && record.kind === 'group' && record.jobType === 'service') {
      await core.place(job, record.group, 'group', record.index, record.canary, record.extraEnv);
    }
  }
  core.save();
}
