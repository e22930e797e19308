/**
 * Native build plan: how a Dockerfile's instructions are honoured on the host, where the host is
 * the base image: ARG and ENV become variables, WORKDIR maps into the release, RUN steps run in
 * order, CMD and ENTRYPOINT become the release's command; FROM, COPY, EXPOSE and USER are
 * recorded as notes because the release directory already holds the source.
 */
import path from 'node:path';
import { parseKeyValues, substitute, type DockerInstruction } from './dockerfile.js';

/** One RUN step to execute in the release. */
export interface NativeRunStep {
  readonly line: number;
  /** Exec form argv, or the shell plus the command for shell form. */
  readonly argv: readonly string[];
  /** Container path the step runs in. */
  readonly workdir: string;
  /** ENV and ARG values visible to the step. */
  readonly env: Readonly<Record<string, string>>;
  /** The instruction text, for messages. */
  readonly text: string;
}

/** What the host build does and what the release runs. */
export interface NativeBuildPlan {
  /** Container path that corresponds to the release's app directory. */
  readonly appRoot: string;
  /** Final container working directory. */
  readonly workdir: string;
  /** Runtime environment from ENV of the final stage. */
  readonly env: Readonly<Record<string, string>>;
  readonly runs: readonly NativeRunStep[];
  /** ENTRYPOINT as argv (shell form wrapped in `/bin/sh -c`), or null. */
  readonly entrypoint: readonly string[] | null;
  /** CMD as argv (shell form wrapped), or null. */
  readonly cmd: readonly string[] | null;
  readonly exposedPorts: readonly string[];
  /** The last `USER` (variables substituted), the user processes run as when the platform runs as root; null without one. */
  readonly user: string | null;
  readonly baseImages: readonly string[];
  readonly notes: readonly string[];
}

/** Interprets parsed instructions with the given build arguments. */
export function planNativeBuild(
  instructions: readonly DockerInstruction[],
  buildArgs: Readonly<Record<string, string>> = {},
): NativeBuildPlan {
  const notes: string[] = [];
  const runs: NativeRunStep[] = [];
  const exposedPorts: string[] = [];
  let user: string | null = null;
  const baseImages: string[] = [];
  let shell: readonly string[] = ['/bin/sh', '-c'];
  const args: Record<string, string> = {};
  let env: Record<string, string> = {};
  let workdir = '/';
  let firstAbsoluteWorkdir: string | undefined;
  let appRoot: string | undefined;
  let entrypoint: readonly string[] | null = null;
  let cmd: readonly string[] | null = null;
  const vars = (): Record<string, string> => ({ ...args, ...env });
  const toArgv = (i: DockerInstruction): string[] => (i.json ? [...i.json] : [...shell, i.args]);

  for (const i of instructions) {
    switch (i.keyword) {
      case 'FROM': {
        baseImages.push(substitute(i.args, args));
        if (baseImages.length > 1) {
          env = {};
          workdir = '/';
          entrypoint = null;
          cmd = null;
        }
        notes.push(`line ${i.line}: FROM ${i.args} ignored: the host is the base image`);
        break;
      }
      case 'ARG': {
        for (const part of i.args.split(/\s+/).filter(Boolean)) {
          const eq = part.indexOf('=');
          const name = eq < 0 ? part : part.slice(0, eq);
          const fallback = eq < 0 ? undefined : substitute(part.slice(eq + 1).replace(/^"(.*)"$/, '$1'), vars());
          const value = buildArgs[name] ?? fallback;
          if (value !== undefined) args[name] = value;
        }
        break;
      }
      case 'ENV':
        for (const [key, value] of parseKeyValues(i.args, i.line, vars())) env[key] = value;
        break;
      case 'WORKDIR': {
        workdir = path.posix.resolve(workdir, substitute(i.args, vars()));
        firstAbsoluteWorkdir ??= workdir;
        break;
      }
      case 'RUN':
        runs.push({ line: i.line, argv: toArgv(i), workdir, env: vars(), text: i.args });
        break;
      case 'CMD':
        cmd = toArgv(i);
        break;
      case 'ENTRYPOINT':
        entrypoint = i.json ? [...i.json] : ['/bin/sh', '-c', i.args];
        break;
      case 'SHELL':
        if (i.json && i.json.length > 0) shell = i.json;
        break;
      case 'COPY':
      case 'ADD': {
        const words = (i.json ?? i.args.split(/\s+/)).filter((w) => !w.startsWith('--'));
        const fromStage = /--from=/.test(i.args);
        const dest = words[words.length - 1];
        const sources = words.slice(0, -1);
        if (!fromStage && dest !== undefined && appRoot === undefined && sources.some((s) => s === '.' || s === './')) {
          appRoot = path.posix.resolve(workdir, substitute(dest, vars()));
        }
        notes.push(
          `line ${i.line}: ${i.keyword} ${i.args} recorded only: the release directory already holds the repository at the commit`,
        );
        break;
      }
      case 'EXPOSE':
        exposedPorts.push(...i.args.split(/\s+/).filter(Boolean));
        notes.push(`line ${i.line}: EXPOSE ${i.args} recorded: ports come from the spec`);
        break;
      case 'USER':
        user = substitute(i.args.trim(), vars());
        notes.push(
          `line ${i.line}: USER ${i.args} recorded: processes run as this user when the platform runs as root and the host has it (ADR 0047)`,
        );
        break;
      default:
        notes.push(`line ${i.line}: ${i.keyword} ignored by the native builder`);
    }
  }
  if (baseImages.length > 1)
    notes.push(
      `multi-stage build flattened: RUN steps of all ${baseImages.length} stages ran in one release directory`,
    );
  return {
    appRoot: appRoot ?? firstAbsoluteWorkdir ?? '/',
    workdir,
    env,
    runs,
    entrypoint,
    cmd,
    exposedPorts,
    user,
    baseImages,
    notes,
  };
}

/** The argv a container would start with, per Docker's ENTRYPOINT/CMD rules; null when neither is set. */
export function effectiveCommand(entrypoint: readonly string[] | null, cmd: readonly string[] | null): string[] | null {
  if (entrypoint) {
    const shellForm = entrypoint.length === 3 && entrypoint[0] === '/bin/sh' && entrypoint[1] === '-c';
    return shellForm ? [...entrypoint] : [...entrypoint, ...(cmd ?? [])];
  }
  return cmd ? [...cmd] : null;
}

/** Host path of a container path: inside the app root it maps into the app dir, elsewhere to the app dir itself. */
export function hostPathFor(
  appDir: string,
  appRoot: string,
  containerPath: string,
): { path: string; outside: boolean } {
  const rel = path.posix.relative(appRoot, containerPath);
  if (rel.startsWith('..') || path.posix.isAbsolute(rel)) return { path: appDir, outside: true };
  return { path: path.join(appDir, rel), outside: false };
}
