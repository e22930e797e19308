/**
 * Child process for the crash test: runs the real knowledge store on a data folder given in the
 * environment and prints its URL as one JSON line on stdout.
 */
import { startKnowledgeStore } from '../../wiring/knowledge-store.js';
import { loadConfig } from '../../platform/config.js';
import { silentLogger } from '../../platform/logger.js';

const store = await startKnowledgeStore(
  loadConfig({ ...process.env, SVC_KNOWLEDGE_PORT: '0', SVC_KNOWLEDGE_ADMIN_PORT: '0', SVC_LOG_LEVEL: 'silent' }),
  silentLogger(),
);
process.stdout.write(`${JSON.stringify({ url: store.url })}\n`);
