/**
 * A throwaway PostgreSQL server (Debian binaries, test/helpers/postgres.ts) serving TLS with the
 * test certificate, so restricted mode's verified-TLS requirement meets a real server.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startPostgres, type PostgresCluster } from '../postgres.js';
import type { TestCertificates } from './test-certificates.js';

/** Starts a cluster and turns TLS on with `certs` (reloaded, no restart). */
export async function startPostgresWithTls(certs: TestCertificates): Promise<PostgresCluster> {
  const cluster = await startPostgres();
  const cert = path.join(cluster.dataDir, 'server.crt');
  const key = path.join(cluster.dataDir, 'server.key');
  fs.copyFileSync(certs.certFile, cert);
  fs.copyFileSync(certs.keyFile, key);
  fs.chmodSync(key, 0o600);
  if (process.getuid?.() === 0) execFileSync('chown', ['postgres:postgres', cert, key]);
  cluster.psql("ALTER SYSTEM SET ssl = 'on'");
  cluster.psql(`ALTER SYSTEM SET ssl_cert_file = '${cert}'`);
  cluster.psql(`ALTER SYSTEM SET ssl_key_file = '${key}'`);
  cluster.psql('SELECT pg_reload_conf()');
  return cluster;
}
