/**
 * Upgrade paths the spec names that restricted mode does not serve (compatibility exec and exec
 * sessions; the full control plane serves them, ADR 0168): answered 501 so that a client learns it
 * at once instead of waiting on a socket nobody answers.
 */
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { refuseUpgrade } from '../../http/upgrade.js';

/** `/api/apps/{id}/exec` and `/api/v1/exec-sessions/...`. */
const UNSERVED = [/^\/api\/apps\/[^/]+\/exec\/?$/, /^\/api\/v1\/exec-sessions(\/.*)?$/];

/** Upgrade handler: refuses the unserved exec paths with 501 `not_served`; leaves every other path. */
export function refuseUnservedUpgrades(req: http.IncomingMessage, socket: Duplex): boolean {
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  if (!UNSERVED.some((pattern) => pattern.test(path))) return false;
  refuseUpgrade(socket, {
    status: 501,
    code: 'not_served',
    message: `exec (${path}) is not served in this mode; see GET /api/v1/capabilities`,
    details: { path },
  });
  return true;
}
