/**
 * Runs the real `svc` program (bin/svc.js) as a child process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './repo.js';

export const SVC_BIN = path.join(REPO_ROOT, 'bin/svc.js');

/**
 * SVC_FROM_SOURCE for the programs a test starts: '1' (the TypeScript sources through tsx, so that a
 * stale dist/ is never what a test runs) unless the environment says otherwise. `npm test` compiles
 * dist/ from the checkout before the tests and sets '0': the same code, started four times faster.
 */
export const SVC_FROM_SOURCE = process.env.SVC_FROM_SOURCE ?? '1';

/**
 * The node arguments that run a TypeScript program of this tree (a crash test's server, say): its
 * compiled copy in dist/ when `npm test` built one (SVC_FROM_SOURCE=0), else the source through tsx.
 */
export function programArgs(tsFile: string): string[] {
  if (SVC_FROM_SOURCE === '0') {
    const compiled = path.join(REPO_ROOT, 'dist', path.relative(REPO_ROOT, tsFile)).replace(/\.ts$/, '.js');
    if (fs.existsSync(compiled)) return [compiled];
  }
  return ['--import', 'tsx', tsFile];
}

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `svc <args>` to completion. */
export function runSvc(
  args: readonly string[],
  options: { env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SVC_BIN, ...args], {
      cwd: options.cwd,
      // The managed PostgreSQL server is off unless a test turns it on (as testConfig does).
      env: {
        ...process.env,
        SVC_LOG_LEVEL: 'silent',
        SVC_FROM_SOURCE,
        SVC_POSTGRES_MANAGED: 'false',
        ...options.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Starts `svc <args>` and resolves when a JSON log line matches `ready`; returns the child and that line. */
export function startSvc(
  args: readonly string[],
  ready: (line: Record<string, unknown>) => boolean,
  options: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<{ child: ChildProcess; line: Record<string, unknown>; output: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SVC_BIN, ...args], {
      env: { ...process.env, SVC_FROM_SOURCE, SVC_POSTGRES_MANAGED: 'false', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let buffer = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`svc did not become ready:\n${output}`));
    }, options.timeoutMs ?? 60_000);
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      output += text;
      buffer += text;
      let newline: number;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const raw = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        try {
          const line = JSON.parse(raw) as Record<string, unknown>;
          if (ready(line)) {
            clearTimeout(timer);
            resolve({ child, line, output: () => output });
          }
        } catch {
          // not a JSON log line
        }
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`svc exited with ${code} before it was ready:\n${output}`));
    });
  });
}
