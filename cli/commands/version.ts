/**
 * `svc version`: prints the build's version label and commit.
 */
import type { Command } from 'commander';
import { buildInfo } from '../../platform/build-info.js';

/** Registers the `version` command. */
export function registerVersion(program: Command): void {
  program
    .command('version')
    .description('Print the platform version, commit and Node.js version')
    .option('--json', 'print as JSON')
    .action((opts: { json?: boolean }) => {
      const info = buildInfo();
      if (opts.json) {
        process.stdout.write(JSON.stringify(info, null, 2) + '\n');
        return;
      }
      process.stdout.write(`${info.name} ${info.label}\ncommit ${info.commit ?? 'unknown'}\nnode ${info.node}\n`);
    });
}
