/**
 * Generates `schemas/validators.generated.ts`, the JSON Schema validators of the spec documents compiled
 * ahead of time by Ajv's standalone code generation (`npm run schemas:types` runs it too). Compiling the
 * three schemas at start-up took a quarter of a second of every `svc validate` and every start
 * (ADR 0156); the generated module only loads. The options are the ones `domain/spec/schema-violations.ts`
 * documents; never edit the output by hand.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Ajv } from 'ajv';
import * as standalone from 'ajv/dist/standalone/index.js';
import { checkoutRoot } from './checkout-root.js';

const root = checkoutRoot(import.meta.dirname);

/** Where the generated validators are written. */
export const generatedValidatorsPath = path.join(root, 'schemas', 'validators.generated.ts');

/** Exported name → schema file in schemas/. */
const SCHEMAS = {
  infraspec: 'infraspec.schema.json',
  deployGroup: 'deploy-group.schema.json',
  fleet: 'fleet.schema.json',
} as const;

const header = `/* eslint-disable */
// @ts-nocheck
/**
 * GENERATED FILE - DO NOT EDIT.
 *
 * Validators of schemas/infraspec.schema.json, schemas/deploy-group.schema.json and
 * schemas/fleet.schema.json, compiled by Ajv (allErrors, verbose, strict) in
 * scripts/generate-schema-validators.ts. Change a schema, then run \`npm run schemas:types\` and commit
 * the result (test/schemas/types-fresh.test.ts fails while this file is stale).
 */
`;

/** The module text: Ajv's standalone ESM code, with its runtime helpers imported rather than required. */
export async function generateSchemaValidators(): Promise<string> {
  const ajv = new Ajv({
    allErrors: true,
    verbose: true,
    strict: true,
    strictRequired: false,
    code: { source: true, esm: true },
  });
  ajv.addKeyword({ keyword: 'x-svc-rule', schemaType: 'string' });
  ajv.addKeyword({ keyword: 'patternErrorMessage', schemaType: 'string' });
  for (const [name, file] of Object.entries(SCHEMAS)) {
    ajv.addSchema(JSON.parse(await fs.readFile(path.join(root, 'schemas', file), 'utf8')) as object, name);
  }
  // A CommonJS module whose export is its `default`; under ESM interop either form may come through.
  type Standalone = (ajv: Ajv, refs: Record<string, string>) => string;
  const exported = (standalone as unknown as { default: Standalone | { default: Standalone } }).default;
  const standaloneCode = typeof exported === 'function' ? exported : exported.default;
  let code = standaloneCode(ajv, Object.fromEntries(Object.keys(SCHEMAS).map((name) => [name, name])));
  const helpers = new Set<string>();
  code = code.replace(/require\("ajv\/dist\/runtime\/([a-z0-9]+)"\)/g, (_match: string, helper: string) => {
    helpers.add(helper);
    return `runtime_${helper}`;
  });
  if (/require\(/.test(code)) throw new Error('the generated validators require a module this script does not import');
  const imports = [...helpers]
    .sort()
    .map((helper) => `import runtime_${helper} from 'ajv/dist/runtime/${helper}.js';\n`)
    .join('');
  return `${header}${imports}${code.replace(/^"use strict";/, '')}\n`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await fs.writeFile(generatedValidatorsPath, await generateSchemaValidators());
  console.log(`wrote ${path.relative(root, generatedValidatorsPath)}`);
}
