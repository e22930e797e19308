/**
 * A validated configuration for tests: ephemeral ports, temp data and apps folders.
 */
import type { ExecutionContext } from 'ava';
import { loadConfig, type SvcConfig } from '../../platform/config.js';
import { tempDir } from './temp-dir.js';

/**
 * Config with port 0 everywhere and fresh folders; `env` overrides any SVC_* variable. The managed
 * PostgreSQL server is off (`SVC_POSTGRES_MANAGED=false`): tests that need it turn it on.
 */
export function testConfig(t: ExecutionContext, env: Record<string, string> = {}): SvcConfig {
  const root = tempDir(t);
  return loadConfig({
    SVC_PORT: '0',
    SVC_KNOWLEDGE_PORT: '0',
    SVC_KNOWLEDGE_ADMIN_PORT: '0',
    SVC_DATA_DIR: `${root}/data`,
    SVC_APPS_DIR: `${root}/apps`,
    SVC_LOG_LEVEL: 'silent',
    SVC_POSTGRES_MANAGED: 'false',
    // Host processes unless a test asks for containers (ADR 0219): container tests set podman.
    SVC_CONTAINER_RUNTIME: 'native',
    // Each plane's registry would compress the base images anew: the mirror's own test turns it on.
    SVC_REGISTRY_MIRROR: 'false',
    ...env,
  });
}
