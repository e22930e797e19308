/**
 * `svc serve`: runs the control plane and the knowledge store (or one of them) until SIGTERM or SIGINT.
 */
import path from 'node:path';
import type { Command } from 'commander';
import { CliError, ExitCode } from '../cli-error.js';
import { loadConfig, redactConfig } from '../../platform/config.js';
import { loadRestrictedMode } from '../../platform/fleet/restricted-config.js';
import { createLogger } from '../../platform/logger.js';
import { ConfigError } from '../../domain/errors.js';
import { packageRoot, releaseFolder } from '../../platform/build-info.js';
import {
  heldListener,
  holdListener,
  preparedStart,
  receiveListeners,
  recordApiProcess,
} from '../../platform/platform-lane/index.js';

interface ServeOptions {
  only?: string;
  apps?: string;
  data?: string;
  hostId?: string;
  eventEnvironment?: string;
}

/** The serve options as arguments, for a restart by the host agent. */
function serveArguments(opts: ServeOptions): string[] {
  return [
    ...(opts.only ? ['--only', opts.only] : []),
    ...(opts.apps ? ['--apps', path.resolve(opts.apps)] : []),
    ...(opts.data ? ['--data', path.resolve(opts.data)] : []),
    ...(opts.hostId !== undefined ? ['--host-id', opts.hostId] : []),
    ...(opts.eventEnvironment !== undefined ? ['--event-environment', opts.eventEnvironment] : []),
  ];
}

const ONLY = ['control', 'knowledge'] as const;

/** Registers the `serve` command. */
export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('Start the control plane (port 8800) and the knowledge store (ports 7701 and 7702)')
    .option('--only <service>', `start only one service: ${ONLY.join(' or ')}`)
    .option('--apps <dir>', 'apps folder (overrides SVC_APPS_DIR)')
    .option('--data <dir>', 'data folder (overrides SVC_DATA_DIR)')
    .option('--host-id <id>', 'host id stamped on every event and in capacity keys (overrides SVC_HOST_ID)')
    .option('--event-environment <name>', 'environment stamped on every event (overrides SVC_EVENT_ENVIRONMENT)')
    .addHelpText('after', '\nEvery setting is an SVC_* environment variable; see docs/configuration.md.')
    .action(async (opts: ServeOptions) => {
      if (opts.only !== undefined && !(ONLY as readonly string[]).includes(opts.only)) {
        throw new CliError(`--only must be one of ${ONLY.join(', ')}, got "${opts.only}"`, ExitCode.usage);
      }
      let config;
      let restricted;
      try {
        const env = {
          ...process.env,
          ...(opts.apps ? { SVC_APPS_DIR: opts.apps } : {}),
          ...(opts.data ? { SVC_DATA_DIR: opts.data } : {}),
          // Checked by the same rules as the variables they override.
          ...(opts.hostId !== undefined ? { SVC_HOST_ID: opts.hostId } : {}),
          ...(opts.eventEnvironment !== undefined ? { SVC_EVENT_ENVIRONMENT: opts.eventEnvironment } : {}),
        };
        config = loadConfig(env);
        restricted = loadRestrictedMode(env, config);
      } catch (error) {
        if (error instanceof ConfigError) throw new CliError(`configuration error: ${error.message}`, ExitCode.failed);
        throw error;
      }
      if (restricted !== undefined && opts.only === 'knowledge')
        throw new CliError(
          'restricted mode (SVC_FLEET_AUTHORITY_ONLY=true) serves only the restricted control plane; --only knowledge does not apply',
          ExitCode.usage,
        );
      const logger = createLogger({ level: config.logLevel, base: { pid: process.pid } });
      // Started by the host agent: the listening sockets come from it (ADR 0159), already accepting.
      const handed = await receiveListeners(process.env);
      logger.info(
        {
          config: redactConfig(config),
          restricted: restricted !== undefined,
          handedListeners: handed,
          bridge: restricted?.bridge !== undefined,
        },
        'starting svc',
      );
      // Loaded here, not at the top: every other command starts without the whole server graph.
      const [{ startControlPlane }, { startKnowledgeStore }] = await Promise.all([
        import('../../wiring/control-plane.js'),
        import('../../wiring/knowledge-store.js'),
      ]);
      // Started prepared by the host agent: the old API serves until this one has loaded its code
      // (most of a start), and stops only then (ADR 0159).
      await preparedStart(process.env);
      // `restart`: the host agent restarts this API (SIGUSR2, ADR 0086): infrastructure apps use stays up.
      const closers: ((restart: boolean) => Promise<void>)[] = [];
      try {
        if (restricted !== undefined) {
          // Restricted mode is its own composition: no knowledge store, no reconcilers, workers or watchers.
          const { startRestrictedPlane } = await import('../../wiring/restricted-plane.js');
          const plane = await startRestrictedPlane(config, restricted, logger);
          closers.push(() => plane.close());
        } else if (opts.only !== 'knowledge') {
          const listener = heldListener('control');
          const plane = await startControlPlane(config, logger, listener === undefined ? {} : { listener });
          closers.push((restart) => plane.close({ restart }));
          // Held, so the host agent this API launches receives it (and hands it to the next API).
          holdListener('control', plane.server.server);
          // The host agent restarts this process from the current release with the same arguments (ADR 0086).
          recordApiProcess(config.platformDir, {
            argv: serveArguments(opts),
            cwd: process.cwd(),
            url: plane.url,
            root: releaseFolder() ?? packageRoot(),
          });
          // The record stays after a stop (liveness is checked by pid and start time): a rollback restarts from it.
        }
        if (restricted === undefined && opts.only !== 'control') {
          const listener = heldListener('knowledge');
          const adminListener = heldListener('knowledge-admin');
          const knowledge = await startKnowledgeStore(config, logger, {
            ...(listener === undefined ? {} : { listener }),
            ...(adminListener === undefined ? {} : { adminListener }),
          });
          closers.push(() => knowledge.close());
          holdListener('knowledge', knowledge.servers[0]!.server);
          holdListener('knowledge-admin', knowledge.servers[1]!.server);
        }
      } catch (error) {
        logger.fatal({ err: error }, 'start failed');
        await Promise.allSettled(closers.map((close) => close(false)));
        process.exitCode = ExitCode.failed;
        return;
      }
      let stopping = false;
      const stop = (signal: string) => {
        if (stopping) return;
        stopping = true;
        const restart = signal === 'SIGUSR2';
        logger.info({ signal }, restart ? 'shutting down for a restart by the host agent' : 'shutting down');
        void Promise.allSettled(closers.map((close) => close(restart))).then(() => {
          logger.info('stopped');
          logger.flush();
          process.exit(0);
        });
      };
      process.once('SIGTERM', () => stop('SIGTERM'));
      process.once('SIGINT', () => stop('SIGINT'));
      process.once('SIGUSR2', () => stop('SIGUSR2'));
    });
}
