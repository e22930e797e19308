/**
 * The error classes of platform/, in one place. Both are domain errors (422 at the edge) whose
 * `details` say what the adapter ran and what it answered.
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

/** `svc install` or `svc uninstall` could not make a change; `details` names the step and its path. */
export class HostInstallError extends DomainError {
  constructor(message: string, details: Record<string, unknown>, cause?: unknown) {
    super('unprocessable', 'host_install_failed', message, { details, cause });
  }
}
