// tier: quick
import test from 'ava';
import { ConfigError } from '../../domain/errors.js';
import { loadConfig, parseByteSize, redactConfig } from '../../platform/config.js';

test('loadConfig fills the documented defaults', (t) => {
  const config = loadConfig({});
  t.is(config.port, 8800);
  t.is(config.knowledgePort, 7701);
  t.is(config.knowledgeAdminPort, 7702);
  t.is(config.host, '127.0.0.1');
  t.is(config.profile, 'development');
  t.is(config.environment, 'development');
  t.false(config.requireExplicitAuth);
  t.is(config.bodyLimitBytes, 1024 * 1024);
  t.true(config.dataDir.endsWith('.data'));
});

test('loadConfig names the variable of a malformed port', (t) => {
  t.throws(() => loadConfig({ SVC_PORT: 'eighty' }), {
    instanceOf: ConfigError,
    message: 'SVC_PORT: "eighty" is not a port number',
  });
  t.throws(() => loadConfig({ SVC_KNOWLEDGE_PORT: '70000' }), {
    instanceOf: ConfigError,
    message: 'SVC_KNOWLEDGE_PORT: 70000 is outside 0-65535',
  });
});

test('loadConfig rejects unknown profiles, booleans and sizes with the variable name', (t) => {
  t.throws(() => loadConfig({ SVC_PROFILE: 'prod' }), {
    message: /^SVC_PROFILE: "prod" is not one of development, production$/,
  });
  t.throws(() => loadConfig({ SVC_REQUIRE_EXPLICIT_AUTH: 'maybe' }), { message: /^SVC_REQUIRE_EXPLICIT_AUTH: / });
  t.throws(() => loadConfig({ SVC_BODY_LIMIT: 'lots' }), { message: /^SVC_BODY_LIMIT: / });
  t.throws(() => loadConfig({ SVC_ENVIRONMENT: 'Prod Env' }), { message: /^SVC_ENVIRONMENT: / });
});

test('loadConfig requires explicit auth and a token in the production profile', (t) => {
  t.throws(() => loadConfig({ SVC_PROFILE: 'production' }), {
    instanceOf: ConfigError,
    message: /^SVC_REQUIRE_EXPLICIT_AUTH: must be true/,
  });
  t.throws(() => loadConfig({ SVC_PROFILE: 'production', SVC_REQUIRE_EXPLICIT_AUTH: 'true' }), {
    message: /^SVC_API_TOKEN: must be set/,
  });
  const config = loadConfig({
    SVC_PROFILE: 'production',
    SVC_REQUIRE_EXPLICIT_AUTH: 'true',
    SVC_API_TOKEN: 'tok',
    SVC_RELEASE_VERIFY_HOOK: 'true',
  });
  t.is(config.profile, 'production');
  t.is(config.releaseSignaturePolicy, 'require-signed');
});

test('redactConfig never shows secret values', (t) => {
  const config = loadConfig({ SVC_API_TOKEN: 'super-secret-token', SVC_KNOWLEDGE_TOKENS: 'a:write:hidden' });
  const shown = JSON.stringify(redactConfig(config));
  t.false(shown.includes('super-secret-token'));
  t.false(shown.includes('hidden'));
  t.is(redactConfig(config).apiToken, '<set>');
});

test('parseByteSize reads units', (t) => {
  t.is(parseByteSize('512kb'), 512 * 1024);
  t.is(parseByteSize('2MB'), 2 * 1024 * 1024);
  t.is(parseByteSize('100'), 100);
  t.is(parseByteSize('1.5 mib'), Math.floor(1.5 * 1024 * 1024));
  t.is(parseByteSize('ten'), undefined);
});

test('fleet and external admission settings outside restricted mode are refused with the variables named', (t) => {
  const error = t.throws(
    () =>
      loadConfig({
        SVC_EXTERNAL_FLEET_VERIFIER_URL: 'https://verifier.example.test',
        SVC_EXTERNAL_FLEET_ADMISSION_APP: 'shop',
      }),
    { instanceOf: ConfigError },
  );
  t.regex(
    error.message,
    /^SVC_EXTERNAL_FLEET_ADMISSION_APP: fleet authority and external admission settings are read only in restricted mode \(SVC_FLEET_AUTHORITY_ONLY=true\)/,
  );
  t.regex(error.message, /unset SVC_EXTERNAL_FLEET_ADMISSION_APP, SVC_EXTERNAL_FLEET_VERIFIER_URL$/);
  t.notThrows(() => loadConfig({ SVC_EXTERNAL_FLEET_VERIFIER_URL: '' }), 'an empty variable is unset');
});
