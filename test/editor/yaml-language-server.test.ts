// tier: full
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import test from 'ava';
import { LspClient } from '../helpers/lsp-client.js';
import { REPO_ROOT } from '../helpers/repo.js';

const require = createRequire(import.meta.url);
const root = REPO_ROOT;
const fixture = path.join(root, 'fixtures/specs/editor/wrong-type.yaml');

test('yaml-language-server reports a wrong-typed field at its line through the schema modeline', async (t) => {
  const serverBin = require.resolve('yaml-language-server/bin/yaml-language-server');
  const client = new LspClient(process.execPath, [serverBin, '--stdio'], (method) => {
    // workspace/configuration: answer with the settings an editor would send.
    if (method === 'workspace/configuration') return [{ validate: true, schemaStore: { enable: false }, schemas: {} }];
    return null;
  });
  t.teardown(() => client.stop());
  await client.request('initialize', {
    processId: process.pid,
    rootUri: pathToFileURL(root).href,
    capabilities: { workspace: { configuration: true }, textDocument: { publishDiagnostics: {} } },
    workspaceFolders: [{ uri: pathToFileURL(root).href, name: 'svc' }],
  });
  client.notify('initialized', {});
  client.notify('workspace/didChangeConfiguration', {
    settings: { yaml: { validate: true, schemaStore: { enable: false } } },
  });
  const uri = pathToFileURL(fixture).href;
  const diagnosticsArrive = client.waitFor(
    'textDocument/publishDiagnostics',
    (p) => p.uri === uri && p.diagnostics.length > 0,
  );
  client.notify('textDocument/didOpen', {
    textDocument: { uri, languageId: 'yaml', version: 1, text: fs.readFileSync(fixture, 'utf8') },
  });
  const timeout = new Promise((_, reject) =>
    setTimeout(() => reject(new Error(`no diagnostics; server said: ${client.stderr}`)), 20_000).unref(),
  );
  const published = (await Promise.race([diagnosticsArrive, timeout])) as {
    diagnostics: { message: string; range: { start: { line: number; character: number } } }[];
  };
  const portLine = fs
    .readFileSync(fixture, 'utf8')
    .split('\n')
    .findIndex((line) => line.includes('port: "eighty"'));
  const hit = published.diagnostics.find((d) => d.range.start.line === portLine);
  t.truthy(hit, `a diagnostic on line ${portLine + 1}: ${JSON.stringify(published.diagnostics)}`);
  t.regex(hit!.message, /Incorrect type|integer/i);
});
