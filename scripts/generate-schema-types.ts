/**
 * Generates `schemas/types.generated.ts`, the TypeScript types of the spec documents, from the JSON Schemas
 * in `schemas/` (`npm run schemas:types`). The schemas are the source of truth; never edit the output by hand.
 *
 * The infraspec root chooses its branch with `if`/`then`/`else` (good validation messages), which
 * json-schema-to-typescript does not understand, so for type generation only the root is rewritten to
 * `anyOf: [else, then]`: `InfraSpec = AppSpec | LegacyFunctionSpec`. The deploy group and fleet schemas
 * are compiled straight from their files.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { compile, compileFromFile, type Options } from 'json-schema-to-typescript';
import { checkoutRoot } from './checkout-root.js';

/** A JSON Schema as json-schema-to-typescript accepts it. */
type JSONSchema4 = Parameters<typeof compile>[0];

const root = checkoutRoot(import.meta.dirname);

/** Where the generated types are written, relative to the package root. */
export const generatedTypesPath = path.join(root, 'schemas', 'types.generated.ts');

const header = `/* eslint-disable */
/**
 * GENERATED FILE - DO NOT EDIT.
 *
 * TypeScript types of the spec documents, generated from schemas/infraspec.schema.json,
 * schemas/deploy-group.schema.json and schemas/fleet.schema.json by scripts/generate-schema-types.ts.
 * Change a schema, then run \`npm run schemas:types\` and commit the result
 * (test/schemas/types-fresh.test.ts fails while this file is stale).
 */
`;

const options: Partial<Options> = {
  bannerComment: '',
  cwd: path.join(root, 'schemas'),
  declareExternallyReferenced: true,
  additionalProperties: false,
  strictIndexSignatures: true,
  ignoreMinAndMaxItems: true,
  format: true,
};

/** The infraspec schema with its `if`/`then`/`else` root rewritten to `anyOf` (see the module comment). */
async function infraspecSchemaForTypes(): Promise<JSONSchema4> {
  const text = await fs.readFile(path.join(root, 'schemas', 'infraspec.schema.json'), 'utf8');
  const schema = JSON.parse(text) as JSONSchema4 & { if?: unknown; then?: JSONSchema4; else?: JSONSchema4 };
  const { if: _if, then: legacy, else: app, ...rest } = schema;
  if (legacy === undefined || app === undefined) {
    throw new Error('schemas/infraspec.schema.json: the root must choose between then and else');
  }
  return { ...rest, anyOf: [app, legacy] };
}

/** Renders the whole content of `schemas/types.generated.ts` (does not write it). */
export async function generateSchemaTypes(): Promise<string> {
  const infraspec = await compile(await infraspecSchemaForTypes(), 'InfraSpec', options);
  const deployGroup = await compileFromFile(path.join(root, 'schemas', 'deploy-group.schema.json'), options);
  const fleet = await compileFromFile(path.join(root, 'schemas', 'fleet.schema.json'), options);
  return [header, infraspec, deployGroup, fleet].map((part) => part.trim()).join('\n\n') + '\n';
}

/** Writes `schemas/types.generated.ts`. */
export async function writeSchemaTypes(): Promise<void> {
  await fs.writeFile(generatedTypesPath, await generateSchemaTypes());
}

const invokedPath = process.argv[1];
if (invokedPath !== undefined && import.meta.url === pathToFileURL(path.resolve(invokedPath)).href) {
  await writeSchemaTypes();
  process.stdout.write(`wrote ${path.relative(process.cwd(), generatedTypesPath)}\n`);
}
