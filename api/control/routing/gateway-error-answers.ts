/**
 * The answers the wake gateway writes itself (no Koa app in its path): a refused request or
 * upgrade gets the edge's error body, from its one error table for domain errors.
 */
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { isDomainError, type DomainError } from '../../../domain/errors.js';
import { refuseUpgrade } from '../../http/upgrade.js';
import { domainErrorResponse } from '../../http/error-middleware.js';

/** What a failed wake answers: its domain error, or 502 `wake_failed` for anything else. */
export function wakeFailure(error: unknown) {
  return isDomainError(error)
    ? error
    : {
        status: 502,
        code: 'wake_failed',
        message: 'the wake gateway could not reach the process',
        details: {},
        headers: {},
      };
}

/** An answer the gateway writes itself (no Koa app in the path): status, error body fields and headers. */
export interface ErrorLike {
  readonly status: number;
  readonly code: string;
  readonly message: string;
  readonly details: Record<string, unknown>;
  readonly headers: Record<string, string>;
}

/** A domain error's answer comes from the edge's one error table. */
function answerOf(error: DomainError | ErrorLike): ErrorLike {
  if (!isDomainError(error)) return error;
  const { status, body, headers } = domainErrorResponse(error);
  return { status, ...body.error, headers };
}

export function sendError(res: http.ServerResponse, failure: DomainError | ErrorLike): void {
  const error = answerOf(failure);
  const body = JSON.stringify({ error: { code: error.code, message: error.message, details: error.details } });
  res.writeHead(error.status, {
    ...error.headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-svc-wake-gateway': 'true',
  });
  res.end(body);
}

export function rejectUpgrade(socket: Duplex, failure: DomainError | ErrorLike): void {
  const error = answerOf(failure);
  refuseUpgrade(socket, {
    status: error.status,
    code: error.code,
    message: error.message,
    details: error.details,
    headers: error.headers,
  });
}
