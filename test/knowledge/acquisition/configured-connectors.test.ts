// tier: quick
/**
 * Acquisition connectors configured on the server (ADR 0234): called by id, their token sent to the
 * connector and nowhere else (answers, receipts, logs, the printed configuration), their URL checked
 * by the outbound guard at each call, and their settings validated at start.
 */
import { Writable } from 'node:stream';
import test from 'ava';
import { pino } from 'pino';
import { ConfigError } from '../../../domain/errors.js';
import { loadConfig, redactConfig } from '../../../platform/config.js';
import { REDACT_PATHS } from '../../../platform/logger.js';
import { startKnowledgeStore } from '../../../wiring/knowledge-store.js';
import { testConfig } from '../../helpers/test-config.js';
import { request } from '../knowledge-harness.js';
import { startReceiver } from '../review-helpers.js';

const NS = '/v1/namespaces/n';
const TOKEN = 'configured-connector-token-7f3a9c';

/** A store with `env`, logging everything (trace) into `lines`. */
async function startStore(t: any, env: Record<string, string>) {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  const logger = pino({ level: 'trace', redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, sink);
  const config = testConfig(t, env);
  const store = await startKnowledgeStore(config, logger);
  t.teardown(() => store.close());
  const call = (method: string, path: string, json?: unknown) =>
    request(store.url + path, { method, ...(json === undefined ? {} : { json }) });
  // A low-confidence isolated note: the plan has a verification task for it.
  const write = await call('POST', `${NS}/write`, { content: 'Old deploy note', source_id: 'chat', confidence: 0.2 });
  if (write.status !== 200) throw new Error(write.text);
  return { store, call, lines, config };
}

test('A connector configured on the server is called by id with its token, which no answer, receipt, log or printed configuration shows', async (t) => {
  const receiver = await startReceiver(t, () => ({
    status: 200,
    body: JSON.stringify({ evidence: [{ content: 'Deploys run from the release pipeline', source_id: 'runbook' }] }),
  }));
  const { call, lines, config } = await startStore(t, {
    SVC_KNOWLEDGE_ALLOW_PRIVATE_TARGETS: 'true',
    SVC_KNOWLEDGE_ACQUISITION_CONNECTORS: `web=${receiver.url}, other=https://connector.example.test/acquire`,
    SVC_KNOWLEDGE_ACQUISITION_CONNECTOR_TOKENS: `web:${TOKEN}`,
    SVC_KNOWLEDGE_ACQUISITION_CONNECTOR_TIMEOUT: '5s',
  });
  const listed = await call('GET', `${NS}/acquisition/connectors`);
  t.is(listed.status, 200, listed.text);
  t.deepEqual(listed.body.connectors, [
    { id: 'web', url: receiver.url, timeout_ms: 5000, token_configured: true },
    { id: 'other', url: 'https://connector.example.test/acquire', timeout_ms: 5000, token_configured: false },
  ]);

  const preview = await call('POST', `${NS}/acquisition/execute`, { connector_id: 'web', budget: 1 });
  t.is(preview.status, 200, preview.text);
  t.like(preview.body, { execute: false, connector_id: 'web', connector_url: receiver.url });
  t.is(receiver.received.length, 0, 'a preview sends nothing');

  const run = await call('POST', `${NS}/acquisition/execute`, { connector_id: 'web', budget: 1, execute: true });
  t.is(run.status, 200, run.text);
  t.like(run.body, { execute: true, connector_id: 'web', connector_url: receiver.url });
  t.like(run.body.results[0], { status: 'succeeded', admitted: [{ admitted: true }] });
  t.is(receiver.received.length, 1);
  t.is(receiver.received[0]!.headers.authorization, `Bearer ${TOKEN}`);
  t.is(receiver.received[0]!.headers['x-svc-event'], 'knowledge.acquisition.task');

  const receipts = await call('GET', `${NS}/acquisition/receipts`);
  t.is(receipts.body.receipts[0].connector_url, receiver.url);
  for (const text of [listed.text, preview.text, run.text, receipts.text, lines.join('')])
    t.false(text.includes(TOKEN), 'the token is never shown');
  t.true(lines.length > 0, 'the store logged');
  t.is(redactConfig(config).knowledgeAcquisitionConnectorTokens, '<set>');
  t.false(JSON.stringify(redactConfig(config)).includes(TOKEN));
});

test('A configured connector is checked by the outbound guard at each call: a loopback URL is refused unless private targets are allowed', async (t) => {
  const receiver = await startReceiver(t, () => ({ status: 200, body: '{"evidence":[]}' }));
  const { call } = await startStore(t, {
    SVC_KNOWLEDGE_ACQUISITION_CONNECTORS: `web=${receiver.url}`,
    SVC_KNOWLEDGE_ACQUISITION_CONNECTOR_TOKENS: `web:${TOKEN}`,
  });
  const res = await call('POST', `${NS}/acquisition/execute`, { connector_id: 'web', execute: true });
  t.is(res.status, 400, res.text);
  t.is(res.body.error.code, 'target_not_allowed');
  t.false(res.text.includes(TOKEN));
  t.is(receiver.received.length, 0, 'nothing is sent to a refused target');
  t.is((await call('GET', `${NS}/acquisition/receipts`)).body.receipts.length, 0);
});

test('connector_id is validated: unknown ids are 404 naming the configured ones, malformed or combined forms are 400', async (t) => {
  const { call } = await startStore(t, {
    SVC_KNOWLEDGE_ACQUISITION_CONNECTORS: 'web=https://connector.example.test/acquire',
  });
  const unknown = await call('POST', `${NS}/acquisition/execute`, { connector_id: 'nope' });
  t.is(unknown.status, 404, unknown.text);
  t.like(unknown.body.error, { code: 'connector_not_found', details: { connector_id: 'nope', configured: ['web'] } });
  t.regex(unknown.body.error.message, /configured: web/);
  for (const body of [
    { connector_id: 'Not An Id' },
    { connector_id: 'web', connector: { url: 'https://connector.example.test/x' } },
    { connector_id: 'web', connectors: [{ id: 'a', type: 'search' }] },
    { connector_id: 7 },
  ]) {
    const res = await call('POST', `${NS}/acquisition/execute`, body);
    t.is(res.status, 400, JSON.stringify(body));
    t.truthy(res.body.error?.code, res.text);
    t.truthy(res.body.error?.message);
  }
});

test('The connector settings are validated at start with errors naming the variable, the entry and the fix, never the token', (t) => {
  const base = { SVC_KNOWLEDGE_ACQUISITION_CONNECTORS: 'web=https://connector.example.test/acquire' };
  const refused = (env: Record<string, string>, message: RegExp) => {
    const error = t.throws(() => loadConfig(env), { instanceOf: ConfigError, message });
    t.false(error?.message.includes(TOKEN) ?? true, 'the token is not repeated');
  };
  refused(
    { SVC_KNOWLEDGE_ACQUISITION_CONNECTORS: 'https://connector.example.test/acquire' },
    /^SVC_KNOWLEDGE_ACQUISITION_CONNECTORS: entry 1 ".*" is not id=url$/,
  );
  refused(
    { SVC_KNOWLEDGE_ACQUISITION_CONNECTORS: 'Web=https://connector.example.test/acquire' },
    /entry 1: id "Web" must be 1-63 lowercase letters/,
  );
  refused(
    { SVC_KNOWLEDGE_ACQUISITION_CONNECTORS: 'web=connector.example.test' },
    /connector "web" has no absolute URL/,
  );
  refused(
    { SVC_KNOWLEDGE_ACQUISITION_CONNECTORS: 'web=ftp://connector.example.test/' },
    /scheme ftp: is not http or https/,
  );
  refused(
    { SVC_KNOWLEDGE_ACQUISITION_CONNECTORS: `web=https://user:${TOKEN}@connector.example.test/` },
    /must not carry credentials: put its token in SVC_KNOWLEDGE_ACQUISITION_CONNECTOR_TOKENS/,
  );
  refused(
    { SVC_KNOWLEDGE_ACQUISITION_CONNECTORS: 'web=https://a.example.test/,web=https://b.example.test/' },
    /entry 2: connector "web" is configured twice/,
  );
  refused(
    { ...base, SVC_KNOWLEDGE_ACQUISITION_CONNECTOR_TOKENS: TOKEN },
    /^SVC_KNOWLEDGE_ACQUISITION_CONNECTOR_TOKENS: entry 1 is not id:token$/,
  );
  refused(
    { ...base, SVC_KNOWLEDGE_ACQUISITION_CONNECTOR_TOKENS: `crawl:${TOKEN}` },
    /entry 1: "crawl" is not a connector of SVC_KNOWLEDGE_ACQUISITION_CONNECTORS \(configured: web\)/,
  );
  refused(
    { SVC_KNOWLEDGE_ACQUISITION_CONNECTOR_TOKENS: `web:${TOKEN}` },
    /"web" is not a connector of SVC_KNOWLEDGE_ACQUISITION_CONNECTORS \(none is configured\)/,
  );
  refused({ ...base, SVC_KNOWLEDGE_ACQUISITION_CONNECTOR_TOKENS: 'web:' }, /connector "web" has an empty token/);
  refused(
    { ...base, SVC_KNOWLEDGE_ACQUISITION_CONNECTOR_TOKENS: `web:${TOKEN},web:${TOKEN}x` },
    /entry 2: connector "web" has a second token/,
  );
  refused(
    { ...base, SVC_KNOWLEDGE_ACQUISITION_CONNECTOR_TOKENS: `web:${TOKEN} more` },
    /the token of connector "web" must be 1-4096 printable ASCII characters without spaces/,
  );
  refused({ SVC_KNOWLEDGE_ACQUISITION_CONNECTOR_TIMEOUT: '2m' }, /^SVC_KNOWLEDGE_ACQUISITION_CONNECTOR_TIMEOUT: /);
  refused(
    { SVC_KNOWLEDGE_ACQUISITION_CONNECTOR_TIMEOUT: '90s' },
    /90000ms is longer than the largest connector timeout, 60s/,
  );

  const config = loadConfig({ ...base, SVC_KNOWLEDGE_ACQUISITION_CONNECTOR_TOKENS: `web:${TOKEN}` });
  t.deepEqual(config.knowledgeAcquisitionConnectors, [{ id: 'web', url: 'https://connector.example.test/acquire' }]);
  t.is(config.knowledgeAcquisitionConnectorTimeoutMs, 10_000);
  t.deepEqual(redactConfig(config).knowledgeAcquisitionConnectors, config.knowledgeAcquisitionConnectors);
  t.deepEqual(loadConfig({}).knowledgeAcquisitionConnectors, []);
});
