/**
 * The spec schemas at a stable URL, so an editor validates a spec in any folder:
 * `# yaml-language-server: $schema=http://<control plane>/schemas/infraspec.schema.json`.
 * Public (no token): a schema holds no secret, and editors send no credentials.
 */
import { createHash } from 'node:crypto';
import Router from '@koa/router';
import { NotFoundError } from '../../../domain/errors.js';
import { SPEC_SCHEMAS } from '../../../domain/spec/index.js';

/** The path prefix of the published schemas. */
export const SCHEMAS_PATH = '/schemas';

/** Routes `GET /schemas/` (the list) and `GET /schemas/{file}` (`application/schema+json`, with an ETag). */
export function schemaRoutes(): Router {
  const router = new Router();
  const bodies = new Map(
    Object.entries(SPEC_SCHEMAS).map(([file, schema]) => {
      const body = JSON.stringify(schema, null, 2) + '\n';
      return [file, { body, etag: `"${createHash('sha256').update(body).digest('hex').slice(0, 32)}"` }];
    }),
  );
  router.get(`${SCHEMAS_PATH}/`, (ctx) => {
    ctx.body = {
      schemas: [...bodies.keys()].map((file) => ({
        file,
        url: `${ctx.protocol}://${ctx.host}${SCHEMAS_PATH}/${file}`,
      })),
    };
  });
  router.get(`${SCHEMAS_PATH}/:file`, (ctx) => {
    const file = ctx.params.file ?? '';
    const found = bodies.get(file);
    if (found === undefined)
      throw new NotFoundError(`no schema ${file}; published: ${[...bodies.keys()].join(', ')}`, {
        code: 'schema_not_found',
        details: { file },
      });
    ctx.set('ETag', found.etag);
    // Editors may cache; a new platform build revalidates through the ETag.
    ctx.set('Cache-Control', 'public, max-age=300, must-revalidate');
    if (ctx.get('If-None-Match') === found.etag) {
      ctx.status = 304;
      return;
    }
    ctx.type = 'application/schema+json; charset=utf-8';
    ctx.body = found.body;
  });
  return router;
}
