/**
 * The optional reload command run after the tunnel config changed (e.g. a service manager reload of
 * the edge daemon). It is operator configuration (`SVC_TUNNEL_RELOAD_COMMAND`), run with `/bin/sh -c`.
 */
import { execFile } from 'node:child_process';

/** Result of one reload. */
export interface ReloadResult {
  readonly ok: boolean;
  readonly exitCode: number | null;
  /** Last lines of the command's output, for logs and conditions. */
  readonly output: string;
}

/** Runs `command` with a time limit; never throws, the result says how it went. */
export function runReloadCommand(
  command: string,
  env: Readonly<Record<string, string>>,
  timeoutMs = 30_000,
): Promise<ReloadResult> {
  return new Promise((resolve) => {
    execFile(
      '/bin/sh',
      ['-c', command],
      { timeout: timeoutMs, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, maxBuffer: 256 * 1024 },
      (error, stdout, stderr) => {
        const output = `${stdout}${stderr}`.trim().split('\n').slice(-5).join('\n');
        const code = error
          ? typeof (error as { code?: unknown }).code === 'number'
            ? (error as { code: number }).code
            : null
          : 0;
        resolve({ ok: !error, exitCode: code, output });
      },
    );
  });
}
