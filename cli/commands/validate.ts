/**
 * `svc validate`: placeholder until the spec validator lands in the next commit.
 */
import type { Command } from 'commander';

/** Registers the `validate` command. */
export function registerValidate(program: Command): void {
  program
    .command('validate [paths...]')
    .description('Validate infraspec.yaml files (default: every spec under SVC_APPS_DIR)')
    .action(() => program.error('validate is not available in this build yet'));
}
