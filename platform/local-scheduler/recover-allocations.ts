/**
 * Recovery: what a new driver instance does with the allocations a previous one left: re-adopt
 * live processes (same pid and start time), start never-started ones, mark vanished ones lost and
 * replace those of service jobs.
 */
import { AllocationRunner } from './allocation-runner.js';
import { isTerminal, type DriverCore } from './driver-core.js';
import { isProcessAlive } from './process-table.js';

/** Recovers every non-terminal allocation of the persisted state. */
export async function recoverAllocations(core: DriverCore): Promise<void> {
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
      runner.start();
      continue;
    }
    const previous = record.status;
    const message = pid === undefined ? 'task was not running when the driver restarted' : `process ${pid} vanished while the driver was down`;
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
