/**
 * control.db migration 11: the canonical spec each deployment submitted, so a rollback restores the
 * spec of the release it returns to (processes, env, resources, endpoints), not only its code.
 */
import type { Migration } from '../../migrate.js';

export const DEPLOYMENT_SPECS_MIGRATION: Migration = {
  version: 11,
  name: 'deployment-specs',
  sql: `
    ALTER TABLE deployments ADD COLUMN spec_json TEXT;
  `,
};
