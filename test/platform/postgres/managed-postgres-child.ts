/**
 * A stand-in platform process for the SIGKILL test: opens the managed PostgreSQL server in the data
 * folder given as argv[2], prints `{"ready":true,"pid":<postmaster>}` and waits to be killed.
 */
import { ManagedPostgres } from '../../../platform/postgres/managed-postgres.js';
import { silentLogger } from '../../../platform/logger.js';

const server = await ManagedPostgres.open({ dataDir: process.argv[2]!, logger: silentLogger() });
process.stdout.write(`${JSON.stringify({ ready: true, pid: server.pid })}\n`);
setInterval(() => undefined, 60_000);
