/**
 * `svc exec <app> [--process web] [-- command...]`: a command or a shell in a running allocation of
 * an app, as the app's own user, in its environment, folder and mount namespace (ADR 0168).
 *
 * - In a terminal without a command (or with `--tty`): an interactive session, a PTY over a
 *   WebSocket (`POST /api/v1/exec-sessions`, then `WS .../attach`); the local terminal is raw and
 *   its size follows the window.
 * - With a command, or when standard input is not a terminal: one-shot compatibility exec
 *   (`POST /api/apps/{id}/exec`), standard input sent as the command's input; output printed as is.
 * It exits with the remote command's exit code (128 + signal when a signal ended it).
 * With authentication on, a session needs a device-key step-up (ADR 0169): `--device-key <file>`
 * (or `SVC_DEVICE_KEY`) names the PEM private key of an enrolled, approved device.
 *
 * Light on purpose: this module imports no server module, and `ws` only when a session opens.
 */
import fs from 'node:fs';
import { createPrivateKey, createPublicKey, sign } from 'node:crypto';
import type { Command } from 'commander';
import { ApiError, CliError, ExitCode } from '../cli-error.js';
import { apiBaseUrl, apiPost, type ApiClientOptions } from '../api-client.js';

interface ExecOptions {
  api?: string;
  process?: string;
  tty?: boolean;
  deviceKey?: string;
}

interface CommandResult {
  exitCode: number;
  signal: string | null;
  stdout: string;
  stderr: string;
  truncated: boolean;
  timedOut: boolean;
}

const SIGNALS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 };

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function oneShot(app: string, command: string[], opts: ExecOptions, api: ApiClientOptions): Promise<void> {
  const stdin = process.stdin.isTTY ? undefined : await readStdin();
  const result = await apiPost<CommandResult>(
    `/api/apps/${encodeURIComponent(app)}/exec`,
    {
      command: command.length > 0 ? command : ['/bin/sh'],
      ...(opts.process === undefined ? {} : { process: opts.process }),
      ...(stdin === undefined ? {} : { stdin }),
    },
    api,
  );
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  if (result.truncated) process.stderr.write('svc exec: output truncated by the server\n');
  if (result.timedOut) process.stderr.write('svc exec: the command timed out and was killed\n');
  process.exitCode = result.signal !== null ? 128 + (SIGNALS[result.signal] ?? 9) : result.exitCode;
}

/** Proves possession of the device key for `app`; returns the one-use capability. */
async function stepUp(app: string, keyFile: string, api: ApiClientOptions): Promise<string> {
  let privateKey;
  try {
    privateKey = createPrivateKey(fs.readFileSync(keyFile));
  } catch (error) {
    throw new CliError(`cannot read the device key ${keyFile}: ${(error as Error).message}`, ExitCode.usage);
  }
  const publicKey = createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString();
  const challenge = await apiPost<{ nonce: string; message: string }>(
    '/api/v1/exec-sessions/step-up/challenge',
    { app },
    api,
  );
  const type = privateKey.asymmetricKeyType;
  const signature = sign(
    type === 'ed25519' || type === 'ed448' ? null : 'sha256',
    Buffer.from(challenge.message),
    privateKey,
  );
  const proof = await apiPost<{ capability: string }>(
    '/api/v1/exec-sessions/step-up',
    { nonce: challenge.nonce, publicKey, signature: signature.toString('base64') },
    api,
  );
  return proof.capability;
}

async function interactive(app: string, command: string[], opts: ExecOptions, api: ApiClientOptions): Promise<void> {
  const keyFile = opts.deviceKey ?? process.env.SVC_DEVICE_KEY;
  const capability = keyFile ? await stepUp(app, keyFile, api) : undefined;
  const size = { cols: process.stdout.columns || 80, rows: process.stdout.rows || 24 };
  const created = await apiPost<{ session: { id: string }; links: { attach: string } }>(
    '/api/v1/exec-sessions',
    {
      app,
      ...(opts.process === undefined ? {} : { process: opts.process }),
      ...(command.length > 0 ? { command } : {}),
      ...size,
      ...(capability === undefined ? {} : { stepUp: capability }),
    },
    api,
  ).catch((error: unknown) => {
    if (error instanceof ApiError && error.code === 'step_up_required')
      throw new CliError(
        `an interactive session needs a device-key step-up: pass --device-key <file> (or SVC_DEVICE_KEY) with the private key of an enrolled, approved device (docs/exec.md)`,
        ExitCode.failed,
      );
    throw error;
  });
  const { default: WebSocket } = await import('ws');
  const token = process.env.SVC_API_TOKEN;
  const ws = new WebSocket(`${apiBaseUrl(api).replace(/^http/, 'ws')}${created.links.attach}`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  const stdin = process.stdin;
  const restore = () => {
    if (stdin.isTTY) stdin.setRawMode(false);
    stdin.pause();
  };
  await new Promise<void>((resolve, reject) => {
    let exited = false;
    ws.on('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => {
        let error: { code?: string; message?: string } = {};
        try {
          error = (JSON.parse(text) as { error: typeof error }).error;
        } catch {
          // not the error shape
        }
        reject(new ApiError(res.statusCode ?? 0, error.code ?? 'http_error', error.message ?? text));
      });
    });
    ws.on('error', (error) => {
      restore();
      reject(new CliError(`exec session: ${error.message}`, ExitCode.failed));
    });
    ws.on('open', () => {
      if (stdin.isTTY) stdin.setRawMode(true);
      stdin.resume();
      stdin.on('data', (data: Buffer) => ws.send(data, { binary: true }));
      process.stdout.on('resize', () =>
        ws.send(JSON.stringify({ type: 'resize', cols: process.stdout.columns, rows: process.stdout.rows })),
      );
    });
    ws.on('message', (raw: Buffer) => {
      const frame = JSON.parse(raw.toString()) as {
        type: string;
        data?: string;
        exitCode?: number;
        signal?: number | null;
        message?: string;
      };
      if (frame.type === 'stdout') process.stdout.write(frame.data ?? '');
      else if (frame.type === 'exit') {
        exited = true;
        process.exitCode = frame.signal ? 128 + frame.signal : (frame.exitCode ?? 1);
      } else if (frame.type === 'error') process.stderr.write(`svc exec: ${frame.message ?? 'session failed'}\n`);
    });
    ws.on('close', () => {
      restore();
      if (!exited && process.exitCode === undefined) process.exitCode = ExitCode.failed;
      resolve();
    });
  });
}

export function registerExec(program: Command): void {
  program
    .command('exec <app> [command...]')
    .description(
      "Run a command, or a shell, in a running allocation of an app as the app's own user (-- separates the command's own options)",
    )
    .option('--process <name>', 'the process to exec in (default: web, else the first running)')
    .option('-t, --tty', 'run the command on a terminal (interactive) even when a command is given')
    .option(
      '--device-key <file>',
      'PEM private key of an enrolled, approved device, for the step-up (or SVC_DEVICE_KEY)',
    )
    .option('--api <url>', 'control plane URL (default: SVC_API_URL or http://127.0.0.1:$SVC_PORT)')
    .addHelpText(
      'after',
      '\nInteractive in a terminal without a command (or with --tty); one-shot with a command or when standard input is not a terminal. Exits with the remote exit code.',
    )
    .action(async (app: string, command: string[], opts: ExecOptions) => {
      const api: ApiClientOptions = opts.api ? { api: opts.api } : {};
      const wantsTerminal = command.length === 0 || opts.tty === true;
      if (wantsTerminal && process.stdin.isTTY === true) await interactive(app, command, opts, api);
      else await oneShot(app, command, opts, api);
    });
}
