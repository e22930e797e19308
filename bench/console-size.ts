/**
 * bench/console-size: what a browser transfers on the first load of each web page, over a real
 * socket from a started control plane and knowledge store: the document and every asset it names,
 * requested as a browser does (`Accept-Encoding: br, gzip`), beside the uncompressed sizes. The
 * acceptance budget of the operator console is 300 KB (issue 16); the browser test
 * test/web/console.test.ts measures the same from Chromium's Resource Timing.
 *
 * Run: node --import tsx bench/console-size.ts
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startControlPlane } from '../wiring/control-plane.js';
import { startKnowledgeStore } from '../wiring/knowledge-store.js';
import { loadConfig } from '../platform/config.js';
import { silentLogger } from '../platform/logger.js';
import { buildWeb } from '../scripts/build-web.js';

const BUDGET = 300_000;

async function firstLoad(base: string): Promise<{
  files: { path: string; transferred: number; raw: number; encoding: string }[];
  transferred: number;
  raw: number;
}> {
  const files: { path: string; transferred: number; raw: number; encoding: string }[] = [];
  const get = async (p: string) => {
    const compressed = await fetch(`${base}${p}`, { headers: { 'accept-encoding': 'br, gzip' } });
    const bytes = (await compressed.arrayBuffer()).byteLength;
    const transferred = Number(compressed.headers.get('content-length') ?? bytes);
    const raw = (await (await fetch(`${base}${p}`, { headers: { 'accept-encoding': 'identity' } })).arrayBuffer())
      .byteLength;
    files.push({ path: p, transferred, raw, encoding: compressed.headers.get('content-encoding') ?? 'identity' });
    return compressed;
  };
  const html = await (await fetch(`${base}/`)).text();
  await get('/');
  for (const match of html.matchAll(/(?:src|href)="(\/ui\/assets\/[^"]+)"/g)) await get(match[1]!);
  return {
    files,
    transferred: files.reduce((s, f) => s + f.transferred, 0),
    raw: files.reduce((s, f) => s + f.raw, 0),
  };
}

await buildWeb();
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-console-'));
const config = loadConfig({
  SVC_PORT: '0',
  SVC_KNOWLEDGE_PORT: '0',
  SVC_KNOWLEDGE_ADMIN_PORT: '0',
  SVC_POSTGRES_MANAGED: 'false',
  SVC_DATA_DIR: dataDir,
  SVC_APPS_DIR: path.join(dataDir, 'apps'),
  SVC_LOG_LEVEL: 'silent',
});
const plane = await startControlPlane(config, silentLogger());
const store = await startKnowledgeStore(config, silentLogger());
try {
  for (const [name, base] of [
    ['operator console (8800)', plane.url],
    ['knowledge admin dashboard (7702)', store.adminUrl],
  ] as const) {
    const load = await firstLoad(base);
    process.stdout.write(
      `${name}: first load ${(load.transferred / 1000).toFixed(1)} KB transferred (${(load.raw / 1000).toFixed(1)} KB uncompressed), budget ${BUDGET / 1000} KB: ${load.transferred < BUDGET ? 'within' : 'OVER'}\n`,
    );
    for (const f of load.files)
      process.stdout.write(
        `  ${f.path.padEnd(40)} ${String(f.transferred).padStart(8)} B ${f.encoding.padEnd(8)} (${f.raw} B)\n`,
      );
  }
} finally {
  await store.close();
  await plane.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
