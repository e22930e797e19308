/**
 * Route entries of the control plane's discovery, apps, validation and published schemas.
 */
import { parseBody as validateInfraspecBody } from '../../control/apps/validate-routes.js';
import type { RouteDocGroup } from '../route-doc.js';

export const META_ROUTE_DOCS: RouteDocGroup = {
  tag: 'meta',
  description: 'Health, version, capability discovery and the published schemas and API description.',
  routes: {
    'GET /api/health': {
      summary: 'Health of the control plane and its database',
      answer: { schema: 'HealthAnswer' },
      errors: [503],
    },
    'GET /api/version': {
      summary: 'Build, profile and environment of this control plane',
      answer: { schema: 'VersionAnswer' },
    },
    'GET /api/v1/capabilities': {
      summary: 'What this build serves: each capability with its routes',
      answer: { schema: 'CapabilitiesAnswer' },
    },
    'GET /schemas/': {
      summary: 'The published spec JSON Schemas with their absolute URLs',
      answer: { schema: 'SchemaListAnswer' },
    },
    'GET /schemas/{file}': {
      summary: 'One spec JSON Schema (`application/schema+json`, with an ETag)',
      description: 'The URL an editor modeline names; `304` on a matching `If-None-Match`.',
      answer: {
        contentType: 'application/schema+json',
        schema: { type: 'object' },
        description: 'The JSON Schema document.',
      },
    },
    'GET /api/openapi.json': {
      summary: 'This OpenAPI 3.1 description of the control plane API',
      answer: { schema: { type: 'object' }, description: 'The OpenAPI document.' },
    },
  },
};

export const APPS_ROUTE_DOCS: RouteDocGroup = {
  tag: 'apps',
  description: 'Discovered apps with conditions and runtime status, the service manifest and right-sizing.',
  routes: {
    'GET /api/apps': {
      summary: 'Every discovered app with its conditions, processes, release, settings and scaling',
      answer: { schema: 'AppList' },
    },
    'GET /api/apps/{id}': {
      summary: 'One app with its conditions, processes, release, settings and scaling',
      answer: { schema: 'AppView' },
    },
    'GET /api/services/manifest': {
      summary: 'Hosted services: reachability, endpoints, placement and instances',
      answer: { schema: 'ServiceManifest' },
    },
    'GET /api/v1/services/manifest': {
      summary: 'Hosted services: reachability, endpoints, placement and instances (versioned path)',
      answer: { schema: 'ServiceManifest' },
    },
    'GET /api/resources/suggestions': {
      summary: 'Right-sizing per running process from peak memory: at risk, right-sized, overprovisioned',
      answer: { description: 'Per running process: peak memory against its limit and a sizing class.' },
    },
    'GET /api/validate': {
      summary: 'Every committed spec in the apps folder with its findings',
      answer: { description: 'Per app file: valid and its findings.' },
    },
    'POST /api/v1/validate/infraspec': {
      summary: 'Validates an infraspec document (YAML text or object) and answers its findings with line and column',
      body: { name: 'ValidateInfraspecRequest', schema: validateInfraspecBody.schema },
      answer: { schema: 'SpecValidation' },
    },
  },
};
