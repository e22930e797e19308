// tier: full
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import test from 'ava';
import { LspClient } from '../helpers/lsp-client.js';
import { startTestControlPlane } from '../helpers/servers.js';
import { testConfig } from '../helpers/test-config.js';
import { tempDir } from '../helpers/temp-dir.js';

const require = createRequire(import.meta.url);

interface Diagnostic {
  readonly message: string;
  readonly range: { readonly start: { readonly line: number; readonly character: number } };
}

test('yaml-language-server validates a spec in an unrelated folder against the schema the control plane serves', async (t) => {
  // Auth on: the schema URL must still work without a token, as an editor sends none.
  const plane = await startTestControlPlane(t, testConfig(t, { SVC_API_TOKEN: 'editor-test-token' }));
  const folder = tempDir(t, 'apps-repo-elsewhere-');
  const file = path.join(folder, 'shop', 'infraspec.yaml');
  fs.mkdirSync(path.dirname(file));
  const text = [
    `# yaml-language-server: $schema=${plane.url}/schemas/infraspec.schema.json`,
    'name: shop',
    'processes:',
    '  web:',
    '    port: "eighty"',
    'endpoints:',
    '  - url: https://shop.example.com/app',
    '',
  ].join('\n');
  fs.writeFileSync(file, text);

  const serverBin = require.resolve('yaml-language-server/bin/yaml-language-server');
  const client = new LspClient(process.execPath, [serverBin, '--stdio'], (method) =>
    method === 'workspace/configuration' ? [{ validate: true, schemaStore: { enable: false }, schemas: {} }] : null,
  );
  t.teardown(() => client.stop());
  await client.request('initialize', {
    processId: process.pid,
    rootUri: pathToFileURL(folder).href,
    capabilities: { workspace: { configuration: true }, textDocument: { publishDiagnostics: {} } },
    workspaceFolders: [{ uri: pathToFileURL(folder).href, name: 'apps' }],
  });
  client.notify('initialized', {});
  client.notify('workspace/didChangeConfiguration', {
    settings: { yaml: { validate: true, schemaStore: { enable: false } } },
  });
  const uri = pathToFileURL(file).href;
  const arrived = client.waitFor(
    'textDocument/publishDiagnostics',
    (p: { uri: string; diagnostics: Diagnostic[] }) => p.uri === uri && p.diagnostics.length > 0,
  );
  client.notify('textDocument/didOpen', { textDocument: { uri, languageId: 'yaml', version: 1, text } });
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error(`no diagnostics; server said: ${client.stderr}`)), 20_000).unref(),
  );
  const { diagnostics } = (await Promise.race([arrived, timeout])) as { diagnostics: Diagnostic[] };
  const at = (line: number) => diagnostics.filter((d) => d.range.start.line === line - 1);
  t.regex(at(5)[0]?.message ?? '', /Incorrect type|integer/i, JSON.stringify(diagnostics));
  t.regex(
    at(7)[0]?.message ?? '',
    /must be a hostname such as app\.example\.com, or an http\(s\) URL of one without a path/,
    JSON.stringify(diagnostics),
  );
});
