/**
 * Device enrollment on the full control plane (ADR 0169), the paths of restricted mode's:
 * `POST /api/v1/fleet/devices/enroll` `{ name, publicKey }` (public: a request grants nothing until
 * approved), `GET /api/v1/fleet/devices/enroll/{id}` (its state), and for administrators
 * `GET /api/v1/fleet/devices/enrollments` and `POST .../enrollments/{id}/approve|reject`.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import type { Principal } from '../../../domain/auth/index.js';
import { compileValidator } from '../../../domain/json-schema.js';
import type { DeviceEnrollments } from '../../../controllers/exec/device-enrollments.js';
import type { Capability } from '../server/meta-routes.js';
import { callerName } from './exec-routes.js';

export const DEVICE_CAPABILITY: Capability = {
  name: 'devices',
  routes: [
    'POST /api/v1/fleet/devices/enroll',
    'GET /api/v1/fleet/devices/enroll/{id}',
    'GET /api/v1/fleet/devices/enrollments',
    'POST /api/v1/fleet/devices/enrollments/{id}/approve',
    'POST /api/v1/fleet/devices/enrollments/{id}/reject',
  ],
  description:
    'Device keys for the exec step-up: a device enrolls its public key, an administrator approves or rejects it.',
};

export const parseEnroll = compileValidator<{ name: string; publicKey: string }>(
  {
    type: 'object',
    required: ['name', 'publicKey'],
    additionalProperties: false,
    properties: {
      name: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9 ._@-]{0,99}$' },
      publicKey: {
        type: 'string',
        maxLength: 4096,
        pattern: '^-----BEGIN PUBLIC KEY-----\\n[A-Za-z0-9+/=\\n]+-----END PUBLIC KEY-----\\n?$',
      },
    },
  },
  'device enrollment',
);
const parseId = compileValidator<{ id: string }>(
  { type: 'object', required: ['id'], properties: { id: { type: 'string', pattern: '^dev_[0-9a-f]{16}$' } } },
  'enrollment',
);

export function deviceRoutes(devices: DeviceEnrollments): Router {
  const router = new Router();
  const who = (ctx: Context) => callerName(ctx.state.principal as Principal | undefined);
  router.post('/api/v1/fleet/devices/enroll', (ctx) => {
    const { name, publicKey } = parseEnroll(ctx.request.body);
    ctx.status = 201;
    ctx.body = { enrollment: devices.request(name, publicKey, who(ctx)) };
  });
  router.get('/api/v1/fleet/devices/enroll/:id', (ctx) => {
    const e = devices.get(parseId(ctx.params).id);
    ctx.body = { enrollment: { id: e.id, state: e.state, requestedAt: e.requestedAt, decidedAt: e.decidedAt } };
  });
  router.get('/api/v1/fleet/devices/enrollments', (ctx) => {
    ctx.body = { enrollments: devices.list() };
  });
  for (const decision of ['approve', 'reject'] as const)
    router.post(`/api/v1/fleet/devices/enrollments/:id/${decision}`, (ctx) => {
      ctx.body = {
        enrollment: devices.decide(parseId(ctx.params).id, decision === 'approve' ? 'approved' : 'rejected', who(ctx)),
      };
    });
  return router;
}
