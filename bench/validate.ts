/**
 * bench/validate: (1) 10,000 random malformed documents through POST /api/v1/validate/infraspec
 * over a real socket, counting 5xx answers (must be 0); (2) validations per second of a 200-line
 * spec, in process and over HTTP, beside YAML parsing alone as the baseline.
 *
 * Run: node --import tsx bench/validate.ts [--docs N] [--seconds S]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import YAML from 'yaml';
import { startControlPlane } from '../wiring/control-plane.js';
import { validateInfraspec } from '../domain/spec/index.js';
import { loadConfig } from '../platform/config.js';
import { silentLogger } from '../platform/logger.js';
import { malformedSpec } from '../test/helpers/malformed-specs.js';
import { arg } from './lib/bench-args.js';

function rate(seconds: number, fn: () => void): number {
  const end = performance.now() + seconds * 1000;
  let count = 0;
  while (performance.now() < end) {
    fn();
    count += 1;
  }
  return count / seconds;
}

const docs = arg('docs', 10_000);
const seconds = arg('seconds', 3);
const root = path.resolve(import.meta.dirname, '..');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-validate-'));
const config = loadConfig({
  SVC_PORT: '0',
  SVC_POSTGRES_MANAGED: 'false',
  SVC_DATA_DIR: dataDir,
  SVC_APPS_DIR: path.join(dataDir, 'apps'),
  SVC_LOG_LEVEL: 'silent',
});
const plane = await startControlPlane(config, silentLogger());

try {
  // (1) malformed documents
  const samples = fc.sample(malformedSpec, { numRuns: docs, seed: 20261121 });
  const statuses = new Map<number, number>();
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < samples.length) {
        const spec = samples[next++];
        const response = await fetch(`${plane.url}/api/v1/validate/infraspec`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ spec }),
        });
        await response.arrayBuffer();
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const fiveXx = [...statuses].filter(([status]) => status >= 500).reduce((sum, [, n]) => sum + n, 0);
  console.log(
    `malformed documents: ${samples.length} in ${elapsed.toFixed(1)} s; statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
  );
  console.log(`5xx answers: ${fiveXx}`);

  // (2) a 200-line spec
  const text = fs.readFileSync(path.join(root, 'fixtures/specs/valid/large-200-lines.yaml'), 'utf8');
  const lines = text.split('\n').length;
  const check = validateInfraspec(text);
  if (!check.valid) throw new Error(`the 200-line fixture is not valid: ${JSON.stringify(check.findings)}`);
  // Over HTTP first: the in-process loops below block the event loop, and the server with it.
  let httpCount = 0;
  const httpEnd = performance.now() + seconds * 1000;
  const body = JSON.stringify({ spec: text });
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (performance.now() < httpEnd) {
        const response = await fetch(`${plane.url}/api/v1/validate/infraspec`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        await response.arrayBuffer();
        httpCount += 1;
      }
    }),
  );
  const parseRate = rate(seconds, () => YAML.parseDocument(text));
  const validateRate = rate(seconds, () => validateInfraspec(text));
  console.log(`spec: ${lines} lines`);
  console.log(`baseline YAML parse only: ${parseRate.toFixed(0)} docs/s`);
  console.log(
    `validate in process: ${validateRate.toFixed(0)} specs/s (${(validateRate / parseRate).toFixed(2)}x the parse-only baseline)`,
  );
  console.log(`validate over HTTP (4 concurrent): ${(httpCount / seconds).toFixed(0)} specs/s`);
} finally {
  await plane.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
