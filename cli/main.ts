/**
 * The `svc` command-line program.
 */
import { Command } from 'commander';
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

/** Builds the program; exported for tests. */
export function createProgram(): Command {
  const program = new Command();
  program
    .name('svc')
    .description('Self-hosted operations platform: control plane for infraspec.yaml apps, and a knowledge store')
    .version(buildInfo().label, '-v, --version')
    .showHelpAfterError();
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
  registerVersion(program);
  return program;
}

/** Runs the program with `argv` (as in `process.argv`). */
export async function main(argv: readonly string[]): Promise<void> {
  await createProgram().parseAsync([...argv]);
}
