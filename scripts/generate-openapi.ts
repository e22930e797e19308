/**
 * Generates the OpenAPI 3.1 documents of the control plane and the knowledge store
 * (`openapi/*.json`), the TypeScript types of their requests and answers (`openapi/*.types.ts`) and
 * the API reference pages (`docs/reference/api-*.md`) from the routers the composition roots build,
 * the route entries of `api/openapi/` and the answer types (ADR 0230).
 *
 * `--check` writes nothing and fails, naming the files, when a committed file differs from what
 * would be generated (run by `npm test`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { checkoutRoot } from './checkout-root.js';
import { answerSchemas, buildDocuments, routesOfCompositionRoots } from './openapi/build-documents.js';
import { referencePage } from './openapi/reference-page.js';
import { apiTypes } from './openapi/api-types.js';

const root = checkoutRoot(import.meta.dirname);
const GENERATED_BY = 'scripts/generate-openapi.ts';

/** Every generated file by its path relative to the checkout. */
export async function generatedFiles(): Promise<Record<string, string>> {
  const routes = await routesOfCompositionRoots();
  const { controlPlane, knowledgeStore } = buildDocuments(routes, answerSchemas(root));
  const json = (document: object) => JSON.stringify(document, null, 2) + '\n';
  return {
    'openapi/control-plane.json': json(controlPlane),
    'openapi/knowledge-store.json': json(knowledgeStore),
    'openapi/control-plane.types.ts': await apiTypes(controlPlane, 'ControlPlaneApi', 'the control plane API'),
    'openapi/knowledge-store.types.ts': await apiTypes(knowledgeStore, 'KnowledgeStoreApi', 'the knowledge store API'),
    'docs/reference/api-control-plane.md': referencePage(controlPlane as never, GENERATED_BY),
    'docs/reference/api-knowledge-store.md': referencePage(knowledgeStore as never, GENERATED_BY),
  };
}

const files = await generatedFiles();
if (process.argv.includes('--check')) {
  const stale = Object.entries(files)
    .filter(([file, text]) => {
      const full = path.join(root, file);
      return !fs.existsSync(full) || fs.readFileSync(full, 'utf8') !== text;
    })
    .map(([file]) => file);
  if (stale.length > 0) {
    process.stderr.write(`stale (run node --import tsx ${GENERATED_BY}): ${stale.join(', ')}\n`);
    process.exit(1);
  }
  process.stdout.write('the OpenAPI documents, their types and the API reference pages are up to date\n');
} else {
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
    process.stdout.write(`wrote ${file}\n`);
  }
}
