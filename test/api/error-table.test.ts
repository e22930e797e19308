// tier: quick
import test from 'ava';
import {
  ConflictError,
  DomainError,
  ErrorKind,
  ForbiddenError,
  isCallerError,
  NotFoundError,
  PayloadTooLargeError,
  TimeoutError,
  UnauthorizedError,
  UnavailableError,
  UnprocessableError,
  ValidationError,
} from '../../domain/errors.js';
import { errorResponse, STATUS_OF_KIND } from '../../api/http/error-middleware.js';

test('the edge error table gives every domain error class its documented status', (t) => {
  const cases: [DomainError, number][] = [
    [new ValidationError('v'), 400],
    [new UnauthorizedError(), 401],
    [new ForbiddenError('f'), 403],
    [new NotFoundError('n'), 404],
    [new ConflictError('c'), 409],
    [new PayloadTooLargeError('p'), 413],
    [new UnprocessableError('u'), 422],
    [new UnavailableError('u'), 503],
    [new TimeoutError('t'), 504],
  ];
  for (const [error, status] of cases) {
    const answer = errorResponse(error);
    t.is(answer.status, status, error.name);
    t.deepEqual(answer.headers, {}, error.name);
    t.deepEqual(answer.body, { error: { code: error.code, message: error.message, details: {} } });
  }
  t.deepEqual(Object.keys(STATUS_OF_KIND).sort(), Object.values(ErrorKind).sort());
});

test('a domain error carries no HTTP status or header, and the edge turns retryAfterSeconds into Retry-After', (t) => {
  const error = new TimeoutError('slow', { code: 'wake_timeout', retryAfterSeconds: 5 });
  t.false('status' in error);
  t.false('headers' in error);
  t.deepEqual(errorResponse(error), {
    status: 504,
    body: { error: { code: 'wake_timeout', message: 'slow', details: {} } },
    headers: { 'Retry-After': '5' },
  });
});

test('isCallerError is true for the kinds the edge answers with a 4xx and false for outages and foreign errors', (t) => {
  for (const kind of Object.values(ErrorKind)) {
    t.is(isCallerError(new DomainError(kind, 'x', 'x')), STATUS_OF_KIND[kind] < 500, kind);
  }
  t.false(isCallerError(new Error('boom')));
});
