/**
 * The error classes of platform/, in one place. Git and build failures are domain errors (422 at
 * the edge) whose `details` say what the adapter ran and what it answered; the outbound ones are
 * adapter errors their callers turn into a delivery result or a domain error.
 */
import { DomainError } from '../domain/errors.js';

/** A git command exited non-zero; `details` carries the arguments and its stderr. */
export class GitError extends DomainError {
  constructor(message: string, details: Record<string, unknown>, cause?: unknown) {
    super('unprocessable', 'git_failed', message, { details, cause });
  }
}

/** A build step failed; `details` carries the Dockerfile line, exit code and output tail. */
export class BuildError extends DomainError {
  constructor(message: string, details: Record<string, unknown>) {
    super('unprocessable', 'build_failed', message, { details });
  }
}

/** A delivery refused by the outbound guard before any connection. */
export class OutboundRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutboundRefused';
  }
}

/** A request timed out (no byte for `timeoutMs`). */
export class OutboundTimeout extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutboundTimeout';
  }
}

/** `svc install` or `svc uninstall` could not make a change; `details` names the step and its path. */
export class HostInstallError extends DomainError {
  constructor(message: string, details: Record<string, unknown>, cause?: unknown) {
    super('unprocessable', 'host_install_failed', message, { details, cause });
  }
}
