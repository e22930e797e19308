/**
 * The host agent as a process: its lock (`<platform dir>/agent.lock`, holder pid and start time,
 * taken with O_EXCL; a dead holder's lock is taken over) and how `svc serve` starts one (detached,
 * in its own session, so it survives the API restarts it performs).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ConflictError } from '../../domain/errors.js';
import { isProcessAlive, readProcess } from '../local-scheduler/tasks/process-table.js';
import { releaseCommand } from './release-command.js';
import { handOffSpawnOptions, sendListeners } from './listener-handoff.js';

const LOCK = 'agent.lock';

/** The live agent's pid, or undefined. */
export function runningAgent(platformDir: string): number | undefined {
  try {
    const holder = JSON.parse(fs.readFileSync(path.join(platformDir, LOCK), 'utf8')) as {
      pid?: number;
      startTime?: string;
    };
    return holder.pid !== undefined && isProcessAlive(holder.pid, holder.startTime) ? holder.pid : undefined;
  } catch {
    return undefined;
  }
}

/** Takes the agent lock; returns its release. A live holder is a conflict (`agent_running`). */
export function acquireAgentLock(platformDir: string): () => void {
  fs.mkdirSync(platformDir, { recursive: true });
  const lock = path.join(platformDir, LOCK);
  const self = { pid: process.pid, startTime: readProcess(process.pid)?.startTime };
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      fs.writeFileSync(lock, JSON.stringify(self), { flag: 'wx', mode: 0o600 });
      return () => {
        try {
          if ((JSON.parse(fs.readFileSync(lock, 'utf8')) as { pid?: number }).pid === process.pid)
            fs.rmSync(lock, { force: true });
        } catch {
          // Already gone.
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = runningAgent(platformDir);
      if (holder !== undefined)
        throw new ConflictError(`a host agent (pid ${holder}) already runs for ${platformDir}`, {
          code: 'agent_running',
          details: { pid: holder },
        });
      fs.rmSync(lock, { force: true });
    }
  }
  throw new ConflictError(`could not take the host agent lock in ${platformDir}`, { code: 'agent_running' });
}

/**
 * Starts `svc agent` of the release in `releaseDir` (a built checkout or the release artifact's
 * folder, {@link releaseCommand}) detached (own session, output appended to
 * `<platform dir>/agent.log`) unless one runs; returns its pid, or undefined when one already ran.
 */
export function launchAgent(options: {
  platformDir: string;
  releaseDir: string;
  dataDir: string;
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
}): number | undefined {
  if (runningAgent(options.platformDir) !== undefined) return undefined;
  const [program, ...leading] = releaseCommand(options.releaseDir);
  fs.mkdirSync(options.platformDir, { recursive: true });
  const log = fs.openSync(path.join(options.platformDir, 'agent.log'), 'a', 0o600);
  try {
    const handOff = handOffSpawnOptions();
    const child = spawn(program, [...leading, 'agent', '--data', options.dataDir], {
      cwd: options.cwd,
      env: { ...options.env, ...handOff.env },
      detached: true,
      stdio: handOff.ipc ? ['ignore', log, log, 'ipc'] : ['ignore', log, log],
    });
    child.unref();
    sendListeners(child);
    return child.pid;
  } finally {
    fs.closeSync(log);
  }
}
