/**
 * How the `svc` program fails: one `error: ...` line on standard error (and the details the
 * server gave, indented), and an exit code from {@link ExitCode}. Usage text is printed only for
 * `--help` and for unknown commands and options (ADR 0015). The CLI's error classes live here, in
 * one place: {@link ApiError} (an API answer that was not 2xx) and {@link CliError} (ADR 0139).
 */
import { CommanderError } from 'commander';

/** An API answer that was not 2xx, with the error body's message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The error body's `details` (validation problems, conflicting ids, ...). */
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The documented exit codes of every `svc` command. */
export const ExitCode = {
  /** The command did what was asked. */
  ok: 0,
  /**
   * The command ran and failed: the server refused the request (4xx other than 404) or failed (5xx),
   * an operation or function it followed did not succeed, a spec has an error, the configuration is
   * invalid.
   */
  failed: 1,
  /**
   * The command line is wrong: an unknown command or option, a missing or malformed argument, a path
   * that does not exist, an ambiguous choice. (`svc inbox` also exits 2 while something is critical.)
   */
  usage: 2,
  /** `svc inbox` only: something needs attention and is critical (for scripts and cron checks). */
  critical: 2,
  /** The control plane could not be reached (connection refused, unknown host, timeout). */
  unreachable: 3,
  /** The app, operation, token or function named does not exist (the server answered 404). */
  notFound: 4,
} as const;

/** One of the documented exit codes. */
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** A failure a command reports to its user: one line, optional details, and its exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** The exit code of an API answer that was not 2xx. */
export function exitCodeOfApiError(error: ApiError): ExitCode {
  if (error.status === 0) return ExitCode.unreachable;
  if (error.status === 404) return ExitCode.notFound;
  return ExitCode.failed;
}

/** An API failure as the CLI reports it: the server's message and code, and its details. */
export function cliErrorOfApiError(error: ApiError): CliError {
  const message = error.status === 0 ? error.message : `${error.message} (${error.code})`;
  return new CliError(message, exitCodeOfApiError(error), error.details);
}

function detailLines(details: Record<string, unknown>): string[] {
  const render = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));
  const lines: string[] = [];
  for (const [key, value] of Object.entries(details)) {
    if (value === undefined) continue;
    if (Array.isArray(value) && value.length > 0) {
      lines.push(`  ${key}:`);
      for (const item of value) lines.push(`    - ${render(item)}`);
    } else {
      lines.push(`  ${key}: ${render(value)}`);
    }
  }
  return lines;
}

/**
 * Reports `error` on `write` (standard error) and returns the exit code. Commander's own errors were
 * already written by Commander (with the usage text where it belongs): only their code is mapped.
 */
export function reportError(
  error: unknown,
  write: (text: string) => void,
  options: { readonly stack?: boolean } = {},
): ExitCode {
  if (error instanceof CommanderError) {
    // --help and --version end through the same path, with exit code 0.
    if (error.exitCode === 0) return ExitCode.ok;
    return ExitCode.usage;
  }
  const failure = error instanceof CliError ? error : error instanceof ApiError ? cliErrorOfApiError(error) : undefined;
  if (failure) {
    write([`error: ${failure.message}`, ...detailLines(failure.details)].join('\n') + '\n');
    return failure.exitCode;
  }
  // Not an expected failure: still one line, with the stack only when asked for.
  const message = error instanceof Error ? error.message : String(error);
  write(`error: ${message}\n${options.stack && error instanceof Error && error.stack ? `${error.stack}\n` : ''}`);
  return ExitCode.failed;
}
