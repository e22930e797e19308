/**
 * Domain errors: the one vocabulary of failure shared by both services.
 *
 * Each error carries a stable snake_case `code`, a message that names the subject and the broken
 * rule, and optional `details`. The HTTP edge maps them to status codes (see `api/http/error-middleware.ts`);
 * GraphQL uses the same table. Anything that is not a `DomainError` is unexpected and becomes a 500
 * whose message is never shown to the caller.
 */

/** Kinds of domain error and the HTTP status each maps to. */
export const ErrorKind = {
  validation: 400,
  unauthorized: 401,
  forbidden: 403,
  notFound: 404,
  conflict: 409,
  payloadTooLarge: 413,
  unprocessable: 422,
  unavailable: 503,
  timeout: 504,
} as const;
export type ErrorKind = keyof typeof ErrorKind;

export interface DomainErrorOptions {
  /** Machine-readable detail for the caller; must never hold secret values. */
  readonly details?: Record<string, unknown>;
  readonly cause?: unknown;
  /** Extra response headers, e.g. `Retry-After`. */
  readonly headers?: Record<string, string>;
}

/** Base class of every error the platform raises on purpose. */
export class DomainError extends Error {
  readonly code: string;
  readonly kind: ErrorKind;
  readonly details: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(kind: ErrorKind, code: string, message: string, options: DomainErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.kind = kind;
    this.code = code;
    this.details = options.details ?? {};
    this.headers = options.headers ?? {};
  }

  /** The HTTP status this error maps to. */
  get status(): number {
    return ErrorKind[this.kind];
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
