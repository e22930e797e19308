/**
 * Spec validation routes: `GET /api/validate` (every committed spec) and
 * `POST /api/v1/validate/infraspec` (a spec sent as YAML text or a JSON object).
 */
import Router from '@koa/router';
import { compileValidator } from '../../../domain/json-schema.js';
import { validateInfraspec, type SchedulerDriver } from '../../../domain/spec/index.js';
import { validateAppsDir } from '../../../controllers/validation/validate-apps.js';

interface ValidateInfraspecBody {
  spec: unknown;
  fleetDocument?: unknown;
}

const bodySchema = {
  type: 'object',
  required: ['spec'],
  additionalProperties: false,
  properties: {
    // Any JSON value: a spec that is not a map is a finding of the validator, not a bad request.
    spec: { description: 'The infraspec.yaml document: YAML text, or the parsed object' },
    fleetDocument: { description: 'Fleet document (object) enabling the node pool existence check', type: 'object' },
  },
} as const;

export const parseBody = compileValidator<ValidateInfraspecBody>(bodySchema, 'validate request');

/** Routes for spec validation; without `appsDir` (restricted mode) only the POST, which reads no folder. */
export function validateRoutes(options: {
  appsDir?: string;
  driver?: SchedulerDriver;
  /** Whether the control plane reads Kafka consumer lag (SVC_KAFKA_EXPORTER_URL); unset: not judged. */
  kafkaLagSource?: boolean;
}): Router {
  const router = new Router();
  const appsDir = options.appsDir;
  if (appsDir !== undefined) {
    router.get('/api/validate', (ctx) => {
      ctx.body = validateAppsDir(appsDir, {
        ...(options.driver === undefined ? {} : { driver: options.driver }),
        ...(options.kafkaLagSource === undefined ? {} : { kafkaLagSource: options.kafkaLagSource }),
      });
    });
  }
  router.post('/api/v1/validate/infraspec', (ctx) => {
    // A YAML (or plain text) body is the spec itself; a JSON body is { spec, fleetDocument? }.
    const raw: unknown = ctx.request.body;
    const body = typeof raw === 'string' ? { spec: raw } : parseBody(raw);
    const result = validateInfraspec(body.spec, {
      ...(body.fleetDocument === undefined ? {} : { fleetDocument: body.fleetDocument }),
      ...(options.driver === undefined ? {} : { driver: options.driver }),
      ...(options.kafkaLagSource === undefined ? {} : { kafkaLagSource: options.kafkaLagSource }),
    });
    ctx.body = { valid: result.valid, findings: result.findings };
  });
  return router;
}
