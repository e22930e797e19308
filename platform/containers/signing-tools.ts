/**
 * The programs behind image signing (ADR 0223): gpg with an agent that never outlives its
 * operations, and a runner for gpg, gpgconf and skopeo that reports a failure with its output.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { DomainError } from '../../domain/errors.js';

export function gpgArgs(home: string): string[] {
  return ['--homedir', home, '--batch', '--no-tty', '--quiet'];
}

/** Live operations per GNUPGHOME: its agent is stopped when the last one ends. */
const agentUsers = new Map<string, number>();

/**
 * Runs `work`, which may start a gpg-agent for `home` (gpg starts one for any secret-key operation),
 * and stops that agent once no other operation of this process uses it: nothing stays running.
 */
export async function withGpgAgentStopped<T>(home: string, work: () => Promise<T>): Promise<T> {
  checkAgentSocketRoom(home);
  agentUsers.set(home, (agentUsers.get(home) ?? 0) + 1);
  try {
    return await work();
  } finally {
    const left = (agentUsers.get(home) ?? 1) - 1;
    if (left > 0) agentUsers.set(home, left);
    else {
      agentUsers.delete(home);
      await runTool('gpgconf', ['--homedir', home, '--kill', 'gpg-agent'], { timeoutMs: 10_000 });
    }
  }
}

/** Longest unix socket path (`sun_path` less its NUL). */
const MAX_SOCKET_PATH = 107;

/**
 * gpg-agent listens in its GNUPGHOME unless `/run/user/<uid>` exists; a socket path longer than a
 * unix socket allows makes every gpg operation fail with "No agent running", so say why at once.
 */
export function checkAgentSocketRoom(home: string): void {
  const socket = path.join(home, 'S.gpg-agent.browser');
  const runtimeDir = `/run/user/${process.getuid?.() ?? 0}`;
  if (socket.length <= MAX_SOCKET_PATH || fs.existsSync(runtimeDir)) return;
  // gpg puts its sockets in the user's runtime folder when there is one: made here (root's, 0700).
  try {
    fs.mkdirSync(runtimeDir, { recursive: true, mode: 0o700 });
    return;
  } catch {
    // Not ours to make: said below.
  }
  throw new DomainError(
    'unavailable',
    'image_signing_path_too_long',
    `image-signing key folder ${home} is too deep for gpg-agent: its socket ${socket} is ${socket.length} bytes, over the ${MAX_SOCKET_PATH} a unix socket allows; use a shorter data folder path, or create ${runtimeDir} so gpg puts its sockets there`,
  );
}

export interface ToolResult {
  readonly ok: boolean;
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function runTool(
  program: string,
  args: readonly string[],
  options: { timeoutMs?: number; env?: Record<string, string> } = {},
): Promise<ToolResult> {
  return new Promise((resolve) => {
    execFile(
      program,
      args,
      {
        env: { ...process.env, ...options.env },
        timeout: options.timeoutMs ?? 60_000,
        maxBuffer: 16 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ ok: !error, code, stdout, stderr: error && !stderr ? error.message : stderr });
      },
    ).stdin?.end();
  });
}

export function toolFailed(what: string, result: ToolResult): DomainError {
  const output = `${result.stdout}${result.stderr}`.trim().slice(-2000);
  return new DomainError(
    'unavailable',
    'image_signature_tool_failed',
    `${what} failed (exit ${String(result.code)}): ${output}`,
  );
}

export function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
