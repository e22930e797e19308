// tier: full
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import test from 'ava';
import { validateInfraspec } from '../../domain/spec/index.js';
import { LspClient } from '../helpers/lsp-client.js';
import { readFixture } from '../domain/spec/spec-fixtures.js';
import { REPO_ROOT } from '../helpers/repo.js';

const require = createRequire(import.meta.url);
const root = REPO_ROOT;

interface Diagnostic {
  readonly message: string;
  readonly severity: number;
  readonly range: { readonly start: { readonly line: number; readonly character: number } };
}

function yamlFiles(folder: string): string[] {
  const dir = path.join(root, folder);
  return fs.readdirSync(dir).filter((name) => name.endsWith('.yaml')).sort().map((name) => path.join(dir, name));
}

/** Opens each file in a real yaml-language-server and collects the diagnostics it publishes. */
async function editorDiagnostics(files: readonly string[]): Promise<Map<string, Diagnostic[]>> {
  const serverBin = require.resolve('yaml-language-server/bin/yaml-language-server');
  const client = new LspClient(process.execPath, [serverBin, '--stdio'], (method) =>
    method === 'workspace/configuration' ? [{ validate: true, schemaStore: { enable: false }, schemas: {} }] : null,
  );
  try {
    await client.request('initialize', {
      processId: process.pid,
      rootUri: pathToFileURL(root).href,
      capabilities: { workspace: { configuration: true }, textDocument: { publishDiagnostics: {} } },
      workspaceFolders: [{ uri: pathToFileURL(root).href, name: 'svc' }],
    });
    client.notify('initialized', {});
    client.notify('workspace/didChangeConfiguration', { settings: { yaml: { validate: true, schemaStore: { enable: false } } } });
    const out = new Map<string, Diagnostic[]>();
    for (const file of files) {
      const uri = pathToFileURL(file).href;
      const published = client.waitFor('textDocument/publishDiagnostics', (params: { uri: string }) => params.uri === uri);
      client.notify('textDocument/didOpen', { textDocument: { uri, languageId: 'yaml', version: 1, text: fs.readFileSync(file, 'utf8') } });
      const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no diagnostics for ${file}: ${client.stderr}`)), 20_000).unref());
      const params = (await Promise.race([published, timeout])) as { diagnostics: Diagnostic[] };
      out.set(file, params.diagnostics);
    }
    return out;
  } finally {
    await client.stop();
  }
}

const clean = [
  ...yamlFiles('fixtures/specs/valid'),
  ...yamlFiles('fixtures/specs/fleets'),
  ...yamlFiles('fixtures/apps/deploy-groups'),
  ...['hello-web', 'ledger-api', 'report-worker', 'thumbnailer'].map((app) => path.join(root, 'fixtures/apps', app, 'infraspec.yaml')),
];

// Rules the schema itself expresses: the editor must flag them where validateInfraspec does.
const schemaExpressed = [
  'schema.type', 'schema.required', 'schema.additionalProperties', 'schema.enum', 'schema.pattern', 'schema.minimum',
  'schema.const', 'schema.propertyNames', 'yaml.syntax', 'postgres.databaseName', 'bucket.dnsName',
  'placement.nodePoolDns', 'schedulerVariables.uid', 'schedulerVariables.gid', 'schedulerVariables.key',
  'schedulerVariables.destination', 'duration.go', 'autoscale.kafkaTopic',
].map((rule) => path.join(root, 'fixtures/specs/invalid', `${rule}.yaml`));

test('yaml-language-server shows no problem in any valid fixture and flags schema rules where validateInfraspec does', async (t) => {
  const diagnostics = await editorDiagnostics([...clean, ...schemaExpressed]);
  for (const file of clean) {
    t.deepEqual(diagnostics.get(file), [], path.relative(root, file));
  }
  for (const file of schemaExpressed) {
    // Each fixture is validated for the driver its header names (driver warnings are not the schema's).
    const ours = validateInfraspec(fs.readFileSync(file, 'utf8'), { driver: readFixture(file).driver }).findings.map((f) => `${f.line}:${f.column}`).sort();
    const editor = [...new Set((diagnostics.get(file) ?? []).map((d) => `${d.range.start.line + 1}:${d.range.start.character + 1}`))].sort();
    t.deepEqual(editor, ours, path.relative(root, file));
  }
});
