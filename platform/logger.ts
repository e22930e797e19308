/**
 * Logger: pino, JSON lines by default and pretty-printed when standard output is a terminal.
 *
 * Secret-bearing fields are redacted by path so that a careless `log.info({ headers })` cannot
 * leak a bearer token.
 */
import { pino, type Logger } from 'pino';
import { build as prettyStream } from 'pino-pretty';
import type { LogLevel } from './config.js';

export type { Logger } from 'pino';

export interface LoggerOptions {
  /** @default 'info' */
  readonly level?: LogLevel;
  /** Pretty output; @default true when stdout is a TTY */
  readonly pretty?: boolean;
  /** Static fields on every line, e.g. `{ service: 'control' }`. */
  readonly base?: Record<string, unknown>;
}

/** Paths pino replaces with `[redacted]` wherever they appear. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-svc-logpush-token"]',
  'req.headers["x-edge-log-secret"]',
  'req.headers["edge-access-jwt-assertion"]',
  'headers.authorization',
  '*.secret',
  '*.token',
  '*.password',
  'secret',
  'token',
  'password',
];

/** Creates the process logger. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const pretty = options.pretty ?? Boolean(process.stdout.isTTY);
  const settings = {
    level: options.level ?? 'info',
    base: options.base ?? {},
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  // Pretty output is a stream in this thread, not a pino transport: a transport is a worker that
  // loads its target by module name, which the release artifact's single bundle cannot (ADR 0140).
  return pretty ? pino(settings, prettyStream({ colorize: true, translateTime: 'SYS:HH:MM:ss.l' })) : pino(settings);
}

/** A logger that writes nothing, for tests and benchmarks. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
