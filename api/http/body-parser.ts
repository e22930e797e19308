/**
 * Request body parsing with the documented size limit (`SVC_BODY_LIMIT`, default 1 MiB).
 * JSON, plain text and YAML bodies are accepted; an oversized body is a 413, malformed JSON a 400.
 */
import { bodyParser } from '@koa/bodyparser';
import type { Middleware } from 'koa';

/** Body parser for one app. */
export function jsonBodyParser(limitBytes: number): Middleware {
  return bodyParser({
    enableTypes: ['json', 'text'],
    extendTypes: { text: ['text/yaml', 'application/yaml', 'application/x-yaml', 'text/plain'] },
    jsonLimit: limitBytes,
    textLimit: limitBytes,
    jsonStrict: false,
    encoding: 'utf-8',
  });
}
