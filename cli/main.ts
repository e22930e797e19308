/**
 * The `svc` program.
 */
import { Command, type ErrorOptions } from 'commander';
import { buildInfo } from '../platform/build-info.js';
import { commandModules, registerCommands } from './command-table.js';
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

/**
 * Builds the program; exported for tests. Errors throw instead of exiting (see {@link main}).
 * `argv` (as in `process.argv`) picks the commands to load: only the named command's module, or
 * every command for the help text and for an unknown command (STYLE.md habit 21, ADR 0156).
 */
export async function createProgram(argv: readonly string[] = []): Promise<Command> {
  const program = new SvcCommand();
  // The label asks git for the commit (two processes from a checkout): only `-v` prints it, so no
  // other command pays for it (ADR 0156).
  const printsVersion = argv.slice(2).some((arg) => arg === '-v' || arg === '--version');
  program
    .name('svc')
    .description('Self-hosted operations platform: control plane for infraspec.yaml apps, and a knowledge store')
    .version(printsVersion ? buildInfo().label : '', '-v, --version')
    // Set before the commands are added: each command inherits it.
    .exitOverride();
  await registerCommands(program, commandModules(argv.slice(2)));
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
    await (await createProgram(argv)).parseAsync([...argv]);
  } catch (error) {
    const debug = ['debug', 'trace'].includes(process.env.SVC_LOG_LEVEL ?? '');
    process.exitCode = reportError(error, (text) => process.stderr.write(text), { stack: debug });
  }
}
