/**
 * Domain errors: the one vocabulary of failure shared by both services, and the one place error
 * classes of domain/ are defined.
 *
 * Each error carries a `kind` (what went wrong, in the caller's terms), a stable snake_case `code`, a
 * message that names the subject and the broken rule, and optional `details`. Nothing here knows about
 * HTTP: the edge's one error table (`STATUS_OF_KIND` in `api/http/error-middleware.ts`) maps each kind to its status and turns
 * `retryAfterSeconds` into `Retry-After`; GraphQL uses the same table. Anything that is not a
 * `DomainError` is unexpected and becomes a 500 whose message is never shown to the caller.
 */

/** Kinds of domain error. */
export const ErrorKind = {
  validation: 'validation',
  unauthorized: 'unauthorized',
  forbidden: 'forbidden',
  notFound: 'notFound',
  conflict: 'conflict',
  payloadTooLarge: 'payloadTooLarge',
  unprocessable: 'unprocessable',
  tooManyRequests: 'tooManyRequests',
  unavailable: 'unavailable',
  timeout: 'timeout',
} as const;
export type ErrorKind = (typeof ErrorKind)[keyof typeof ErrorKind];

/** Kinds that mean the caller asked for something wrong (as opposed to a dependency failing). */
const CALLER_KINDS: ReadonlySet<ErrorKind> = new Set<ErrorKind>([
  'validation',
  'unauthorized',
  'forbidden',
  'notFound',
  'conflict',
  'payloadTooLarge',
  'unprocessable',
  'tooManyRequests',
]);

export interface DomainErrorOptions {
  /** Machine-readable detail for the caller; must never hold secret values. */
  readonly details?: Record<string, unknown>;
  readonly cause?: unknown;
  /** When the caller may usefully try again, in whole seconds (the edge sends it as `Retry-After`). */
  readonly retryAfterSeconds?: number;
}

/** Base class of every error the platform raises on purpose. */
export class DomainError extends Error {
  readonly code: string;
  readonly kind: ErrorKind;
  readonly details: Record<string, unknown>;
  readonly retryAfterSeconds: number | undefined;

  constructor(kind: ErrorKind, code: string, message: string, options: DomainErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.kind = kind;
    this.code = code;
    this.details = options.details ?? {};
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** The caller sent something that breaks a rule. */
export class ValidationError extends DomainError {
  constructor(message: string, options: DomainErrorOptions & { code?: string } = {}) {
    super('validation', options.code ?? 'validation_failed', message, options);
  }
}

/** A named thing does not exist. */
export class NotFoundError extends DomainError {
  constructor(message: string, options: DomainErrorOptions & { code?: string } = {}) {
    super('notFound', options.code ?? 'not_found', message, options);
  }
}

/** The request conflicts with the current state (in-flight work, an existing name). */
export class ConflictError extends DomainError {
  constructor(message: string, options: DomainErrorOptions & { code?: string } = {}) {
    super('conflict', options.code ?? 'conflict', message, options);
  }
}

/** Well-formed, but cannot be processed as asked (e.g. an idempotency key reused for another request). */
export class UnprocessableError extends DomainError {
  constructor(message: string, options: DomainErrorOptions & { code?: string } = {}) {
    super('unprocessable', options.code ?? 'unprocessable', message, options);
  }
}

/** Missing or invalid credentials. */
export class UnauthorizedError extends DomainError {
  constructor(message = 'authentication required', options: DomainErrorOptions & { code?: string } = {}) {
    super('unauthorized', options.code ?? 'unauthorized', message, options);
  }
}

/** Valid credentials that do not grant this action. */
export class ForbiddenError extends DomainError {
  constructor(message: string, options: DomainErrorOptions & { code?: string } = {}) {
    super('forbidden', options.code ?? 'forbidden', message, options);
  }
}

/** The request body exceeds the documented size limit. */
export class PayloadTooLargeError extends DomainError {
  constructor(message: string, options: DomainErrorOptions & { code?: string } = {}) {
    super('payloadTooLarge', options.code ?? 'payload_too_large', message, options);
  }
}

/** The caller holds as many of a bounded thing as allowed (exec sessions, say); `retryAfterSeconds` says when to try again. */
export class TooManyRequestsError extends DomainError {
  constructor(message: string, options: DomainErrorOptions & { code?: string } = {}) {
    super('tooManyRequests', options.code ?? 'too_many_requests', message, options);
  }
}

/** A dependency is not available right now; the caller may retry. */
export class UnavailableError extends DomainError {
  constructor(message: string, options: DomainErrorOptions & { code?: string } = {}) {
    super('unavailable', options.code ?? 'unavailable', message, options);
  }
}

/** Waiting for something took longer than allowed. */
export class TimeoutError extends DomainError {
  constructor(message: string, options: DomainErrorOptions & { code?: string } = {}) {
    super('timeout', options.code ?? 'timeout', message, options);
  }
}

/** A configuration value is missing or malformed; raised at start, names the variable. */
export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, message: string) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
    this.variable = variable;
  }
}

/** True when `error` is one the platform raised on purpose. */
export function isDomainError(error: unknown): error is DomainError {
  return error instanceof DomainError;
}

/** True when `error` is a domain error caused by the caller's request, not by a failing dependency. */
export function isCallerError(error: unknown): error is DomainError {
  return error instanceof DomainError && CALLER_KINDS.has(error.kind);
}
