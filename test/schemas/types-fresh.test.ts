// tier: quick
import fs from 'node:fs';
import test from 'ava';
import { generatedTypesPath, generateSchemaTypes } from '../../scripts/generate-schema-types.js';
import { generatedValidatorsPath, generateSchemaValidators } from '../../scripts/generate-schema-validators.js';

test('schemas/types.generated.ts matches what the schemas generate (run npm run schemas:types)', async (t) => {
  const committed = fs.readFileSync(generatedTypesPath, 'utf8');
  const fresh = await generateSchemaTypes();
  t.is(committed, fresh);
});

test('schemas/types.generated.ts says it is generated and how to regenerate it', (t) => {
  const committed = fs.readFileSync(generatedTypesPath, 'utf8');
  t.regex(committed, /GENERATED FILE - DO NOT EDIT/);
  t.regex(committed, /npm run schemas:types/);
  for (const name of ['InfraSpec', 'AppSpec', 'LegacyFunctionSpec', 'Process', 'DeployGroup', 'FleetDocument']) {
    t.regex(committed, new RegExp(`export (type|interface) ${name}\\b`), name);
  }
});

test('schemas/validators.generated.ts matches what the schemas compile to (run npm run schemas:types)', async (t) => {
  const committed = fs.readFileSync(generatedValidatorsPath, 'utf8');
  t.is(committed, await generateSchemaValidators());
  t.regex(committed, /GENERATED FILE - DO NOT EDIT/);
});
