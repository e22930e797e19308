/**
 * The log port: what code outside platform/ needs of a logger. The process logger of
 * platform/logger.ts (pino) implements it; the edge (api/) depends only on this.
 */

/** One log call: structured fields and a message, or a message alone. */
export interface LogFn {
  (fields: object, message?: string): void;
  (message: string): void;
}

/** A structured logger. */
export interface LoggerPort {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  /** A logger that adds `bindings` to every line. */
  child(bindings: Record<string, unknown>): LoggerPort;
}
