/**
 * `svc agent`: the host agent. It claims only `platform.*` operations from control.db, runs the
 * self-upgrade lane, restarts the API when the lane says so, and survives those restarts. `svc
 * serve` starts one when lane work is queued (`SVC_AGENT=auto`); a service unit may run it itself.
 */
import type { Command } from 'commander';
import { CliError, ExitCode } from '../cli-error.js';
import { loadConfig } from '../../platform/config.js';
import { createLogger } from '../../platform/logger.js';
import { ConfigError, ConflictError } from '../../domain/errors.js';

/** Registers the `agent` command. */
export function registerAgent(program: Command): void {
  program
    .command('agent')
    .description(
      'Run the host agent of the platform self-upgrade lane (claims platform.* operations; leaves when no API has run for a while)',
    )
    .option('--data <dir>', 'data folder (overrides SVC_DATA_DIR)')
    .action(async (opts: { data?: string }) => {
      let config;
      try {
        config = loadConfig({ ...process.env, ...(opts.data ? { SVC_DATA_DIR: opts.data } : {}) });
      } catch (error) {
        if (error instanceof ConfigError) throw new CliError(`configuration error: ${error.message}`, ExitCode.failed);
        throw error;
      }
      const logger = createLogger({ level: config.logLevel, base: { pid: process.pid } });
      // The API (or the agent) that launched this one hands over its listening sockets (ADR 0159):
      // held, never accepted on here, and passed to each API this agent starts.
      const { receiveListeners } = await import('../../platform/platform-lane/index.js');
      const { releaseListeners } = await import('../../platform/platform-lane/index.js');
      const handed = await receiveListeners(process.env);
      if (config.agentRestartMode === 'stop' || config.agentRestartCommand !== undefined) {
        // A supervisor or a restart command starts the next API, which binds the ports itself: sockets
        // held here would keep it from binding them (ADR 0159: such hosts keep the restart gap).
        const released = releaseListeners();
        if (released.length > 0)
          logger.info({ listeners: released }, 'the next API binds its own ports: sockets released');
      } else if (handed.length > 0) logger.info({ listeners: handed }, 'holding the API listeners across restarts');
      const { startHostAgent } = await import('../../wiring/host-agent.js');
      let running;
      try {
        running = startHostAgent(config, logger);
      } catch (error) {
        if (error instanceof ConflictError) throw new CliError(error.message, ExitCode.failed);
        throw error;
      }
      const stop = (reason: string) => {
        logger.info({ reason }, 'host agent stopping');
        void running.close().then(() => {
          logger.flush();
          process.exit(0);
        });
      };
      process.once('SIGTERM', () => stop('SIGTERM'));
      process.once('SIGINT', () => stop('SIGINT'));
      void running.agent.stopped.then((reason) => stop(reason));
    });
}
