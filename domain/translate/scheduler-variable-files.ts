/**
 * Scheduler variable files: how a process's `schedulerVariables` become private task files, file-path
 * environment variables, and a task that fails when a value is missing.
 */
import type { CanonicalProcess } from '../spec/index.js';
import type { TemplateFileSpec } from '../scheduler/index.js';

/** Folder of the allocation directory the files are rendered into (the driver's `SVC_SECRETS_DIR`). */
export const secretsFolder = 'secrets';

/** File mode of a scheduler variable file: owner read-only. */
export const schedulerVariableFileMode = 0o400;

/** What a process's scheduler variables become in its task. */
export interface SchedulerVariableDelivery {
  /** Files rendered for the keys that have a value, in spec order. */
  readonly files: TemplateFileSpec[];
  /** `<KEY>_FILE` → `secrets/<destination>` for every declared file, present or not. */
  readonly env: Record<string, string>;
  /** Keys without a value, with the index of their entry in `schedulerVariables.files`. */
  readonly missing: Array<{ readonly key: string; readonly index: number; readonly destination: string }>;
}

/** The allocation-relative path of a variable file: `secrets/<destination>`. */
export function schedulerVariableFilePath(destination: string): string {
  return `${secretsFolder}/${destination}`;
}

/**
 * The files and file-path variables of a process's scheduler variables. `values` are the job-owned
 * variable values keyed by KEY; a key without a value gets no file and is listed in `missing`.
 */
export function schedulerVariableDelivery(
  process: CanonicalProcess,
  values: Readonly<Record<string, string>>,
): SchedulerVariableDelivery {
  const delivery: SchedulerVariableDelivery = { files: [], env: {}, missing: [] };
  (process.schedulerVariables?.files ?? []).forEach((file, index) => {
    const destination = schedulerVariableFilePath(file.destination);
    delivery.env[`${file.key}_FILE`] = destination;
    const contents = Object.hasOwn(values, file.key) ? values[file.key] : undefined;
    if (contents === undefined) delivery.missing.push({ key: file.key, index, destination });
    else delivery.files.push({ destination, contents, mode: schedulerVariableFileMode });
  });
  return delivery;
}

/** Quotes text for a POSIX shell as one word. */
function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * The command that replaces a task's command while scheduler variables are missing: it prints which keys
 * are missing at which path to stderr and exits 78 (EX_CONFIG), so the task fails visibly on any driver
 * that runs commands, without a value or secret in the command line.
 */
export function missingVariablesCommand(keys: readonly string[], path: string): string {
  const message = `svc: scheduler variable${keys.length === 1 ? '' : 's'} ${keys.join(', ')} missing at ${path}; the task cannot start`;
  return `echo ${shellQuote(message)} >&2; exit 78`;
}
