/**
 * The `svc` program's commands, each loaded only when named (STYLE.md habit 21, ADR 0156): a client
 * command such as `svc version` or `svc apps` imports neither the server nor the other commands.
 */
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import type * as ValidateCommand from './commands/validate.js';
import { commandName } from './command-name.js';

/** One module of commands: the top-level names it registers and how to load its `register` function. */
interface CommandModule {
  readonly names: readonly string[];
  readonly load: () => Promise<(program: Command) => void>;
}

/**
 * The URL of the command's bundle when the build made one beside its module (scripts/build-cli.ts,
 * ADR 0198): the same code, loaded without opening a hundred small files. From the sources, and in
 * the release artifact (one bundle already), there is none.
 */
function bundled(name: string): string | undefined {
  const bundle = new URL(`./commands/${name}.bundle.js`, import.meta.url);
  return existsSync(bundle) ? bundle.href : undefined;
}

/** Every command module, in the order the help text lists them. */
export const COMMAND_MODULES: readonly CommandModule[] = [
  { names: ['serve'], load: async () => (await import('./commands/serve.js')).registerServe },
  {
    names: ['validate'],
    load: async () => {
      // The bundle's name is a variable, so that the release artifact's bundler leaves it alone.
      const bundle = bundled('validate');
      if (bundle !== undefined) return ((await import(bundle)) as typeof ValidateCommand).registerValidate;
      return (await import('./commands/validate.js')).registerValidate;
    },
  },
  { names: ['apps', 'status'], load: async () => (await import('./commands/apps.js')).registerApps },
  { names: ['events', 'notifications'], load: async () => (await import('./commands/events.js')).registerEvents },
  {
    names: ['deploy', 'preflight', 'rollback'],
    load: async () => (await import('./commands/deploy.js')).registerDeploy,
  },
  { names: ['ops'], load: async () => (await import('./commands/ops.js')).registerOps },
  { names: ['snapshots'], load: async () => (await import('./commands/snapshots.js')).registerSnapshots },
  { names: ['migrations'], load: async () => (await import('./commands/migrations.js')).registerMigrations },
  { names: ['secrets'], load: async () => (await import('./commands/secrets.js')).registerSecrets },
  { names: ['invoke', 'functions'], load: async () => (await import('./commands/functions.js')).registerFunctions },
  { names: ['logs'], load: async () => (await import('./commands/logs.js')).registerLogs },
  { names: ['exec'], load: async () => (await import('./commands/exec.js')).registerExec },
  { names: ['audit'], load: async () => (await import('./commands/audit.js')).registerAudit },
  { names: ['tokens'], load: async () => (await import('./commands/tokens.js')).registerTokens },
  { names: ['inbox'], load: async () => (await import('./commands/inbox.js')).registerInbox },
  { names: ['backup', 'restore'], load: async () => (await import('./commands/backup.js')).registerBackup },
  { names: ['doctor'], load: async () => (await import('./commands/doctor.js')).registerDoctor },
  { names: ['install', 'uninstall'], load: async () => (await import('./commands/install.js')).registerInstall },
  { names: ['platform'], load: async () => (await import('./commands/platform.js')).registerPlatform },
  { names: ['agent'], load: async () => (await import('./commands/agent.js')).registerAgent },
  { names: ['version'], load: async () => (await import('./commands/version.js')).registerVersion },
];

/**
 * The modules `args` (the arguments after the program's name) needs: the one that registers the
 * named command, or all of them when no known command is named (the help text and the
 * unknown-command error list every command).
 */
export function commandModules(args: readonly string[]): readonly CommandModule[] {
  const name = commandName(args);
  const named = name === undefined ? undefined : COMMAND_MODULES.find((module) => module.names.includes(name));
  return named ? [named] : COMMAND_MODULES;
}

/** Loads `modules` and registers their commands on `program`, in order. */
export async function registerCommands(program: Command, modules: readonly CommandModule[]): Promise<void> {
  const registers = await Promise.all(modules.map((module) => module.load()));
  for (const register of registers) register(program);
}
