/**
 * The `svc` program.
 */
import { Command, type ErrorOptions } from 'commander';
import { buildInfo } from '../platform/build-info.js';
import { registerServe } from './commands/serve.js';
import { registerVersion } from './commands/version.js';
import { registerValidate } from './commands/validate.js';
import { registerApps } from './commands/apps.js';
import { registerEvents } from './commands/events.js';
import { registerDeploy } from './commands/deploy.js';
import { registerOps } from './commands/ops.js';
import { registerFunctions } from './commands/functions.js';
import { registerTokens } from './commands/tokens.js';
import { registerInbox } from './commands/inbox.js';
import { registerDoctor } from './commands/doctor.js';
import { registerInstall } from './commands/install.js';
import { registerPlatform } from './commands/platform.js';
import { registerAgent } from './commands/agent.js';
import { registerBackup } from './commands/backup.js';
import { ExitCode, reportError } from './cli-error.js';

/** Command-line mistakes that earn the usage text: the user does not know the commands or options. */
const SHOWS_USAGE = new Set(['commander.unknownCommand', 'commander.unknownOption']);

/** `svc tokens create`: the names from the program down to `command`. */
function commandPath(command: Command): string {
  const names: string[] = [];
  for (let at: Command | null = command; at; at = at.parent) names.unshift(at.name());
  return names.join(' ');
}

/**
 * A command whose parse errors print the usage text only for an unknown command or option; every
 * other one (a missing argument, a bad option value) is one line and a pointer to `--help`. All of
 * them exit with {@link ExitCode.usage}.
 */
class SvcCommand extends Command {
  override createCommand(name?: string): Command {
    return new SvcCommand(name);
  }

  override error(message: string, errorOptions?: ErrorOptions): never {
    const code = errorOptions?.code ?? '';
    this.showHelpAfterError(SHOWS_USAGE.has(code) ? true : `(run "${commandPath(this)} --help" for usage)`);
    return super.error(message, { ...errorOptions, exitCode: ExitCode.usage });
  }
}

/** Builds the program; exported for tests. Errors throw instead of exiting (see {@link main}). */
export function createProgram(): Command {
  const program = new SvcCommand();
  program
    .name('svc')
    .description('Self-hosted operations platform: control plane for infraspec.yaml apps, and a knowledge store')
    .version(buildInfo().label, '-v, --version')
    // Set before the commands are added: each command inherits it.
    .exitOverride();
  registerServe(program);
  registerValidate(program);
  registerApps(program);
  registerEvents(program);
  registerDeploy(program);
  registerOps(program);
  registerFunctions(program);
  registerTokens(program);
  registerInbox(program);
  registerDoctor(program);
  registerInstall(program);
  registerPlatform(program);
  registerAgent(program);
  registerBackup(program);
  registerVersion(program);
  program.addHelpText(
    'after',
    '\nExit codes: 0 done, 1 failed (refused or failed request, failed deploy or function, invalid spec), 2 wrong usage (svc inbox: also critical), 3 control plane unreachable, 4 not found.',
  );
  return program;
}

/**
 * Runs the program with `argv` (as in `process.argv`). A failure prints one `error:` line (and the
 * server's details) on standard error and sets the documented exit code (ADR 0015).
 */
export async function main(argv: readonly string[]): Promise<void> {
  try {
    await createProgram().parseAsync([...argv]);
  } catch (error) {
    const debug = ['debug', 'trace'].includes(process.env.SVC_LOG_LEVEL ?? '');
    process.exitCode = reportError(error, (text) => process.stderr.write(text), { stack: debug });
  }
}
