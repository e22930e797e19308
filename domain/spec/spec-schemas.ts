/**
 * The JSON Schemas of the spec documents, by the file name they are published under
 * (`GET /schemas/<file>` on the control plane, and schemas/ in the package).
 */
import infraspecSchema from '../../schemas/infraspec.schema.json' with { type: 'json' };
import deployGroupSchema from '../../schemas/deploy-group.schema.json' with { type: 'json' };
import fleetSchema from '../../schemas/fleet.schema.json' with { type: 'json' };

/** Schema file name → schema document. */
export const SPEC_SCHEMAS: Readonly<Record<string, object>> = Object.freeze({
  'infraspec.schema.json': infraspecSchema,
  'deploy-group.schema.json': deployGroupSchema,
  'fleet.schema.json': fleetSchema,
});
