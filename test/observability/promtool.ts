/**
 * Runs Prometheus's real `promtool` (Debian package `prometheus`, installed by scripts/ensure-deps.sh)
 * on files a test wrote.
 */
import { execFile } from 'node:child_process';

/** The result of one promtool run. */
export interface PromtoolRun {
  readonly code: number;
  readonly output: string;
}

/** Runs `promtool ...args` in `cwd`; never throws for a non-zero exit. */
export function promtool(cwd: string, ...args: string[]): Promise<PromtoolRun> {
  return promtoolWithInput(cwd, undefined, ...args);
}

/** `promtool check metrics` on an exposition text (it reads standard input). */
export function promtoolCheckMetrics(cwd: string, exposition: string): Promise<PromtoolRun> {
  return promtoolWithInput(cwd, exposition, 'check', 'metrics');
}

function promtoolWithInput(cwd: string, input: string | undefined, ...args: string[]): Promise<PromtoolRun> {
  return new Promise((resolve, reject) => {
    const child = execFile('promtool', args, { cwd, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error && (error as NodeJS.ErrnoException).code === 'ENOENT') {
        reject(new Error('promtool is not installed: run `bash scripts/ensure-deps.sh` (Debian package prometheus)'));
        return;
      }
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, output: `${stdout}${stderr}` });
    });
    child.stdin?.end(input ?? '');
  });
}
