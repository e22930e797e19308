/**
 * A throwaway certificate authority and a loopback server certificate made with openssl, so the
 * stand-ins serve real HTTPS (and PostgreSQL real TLS) that the platform verifies.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Files and PEM text of the test CA and the server certificate for localhost and 127.0.0.1. */
export interface TestCertificates {
  readonly dir: string;
  readonly caFile: string;
  readonly caPem: string;
  readonly certFile: string;
  readonly keyFile: string;
  readonly certPem: string;
  readonly keyPem: string;
}

/** Makes a CA and a server certificate in a new folder (removed by `remove`). */
export function makeTestCertificates(): TestCertificates & { remove(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-tls-'));
  const file = (name: string) => path.join(dir, name);
  const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  openssl([
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=svc test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  openssl([
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    file('server.key'),
    '-out',
    file('server.csr'),
    '-subj',
    '/CN=localhost',
  ]);
  fs.writeFileSync(
    file('ext.cnf'),
    'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n',
  );
  openssl([
    'x509',
    '-req',
    '-in',
    file('server.csr'),
    '-CA',
    file('ca.pem'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-out',
    file('server.pem'),
    '-days',
    '2',
    '-extfile',
    file('ext.cnf'),
  ]);
  return {
    dir,
    caFile: file('ca.pem'),
    caPem: fs.readFileSync(file('ca.pem'), 'utf8'),
    certFile: file('server.pem'),
    keyFile: file('server.key'),
    certPem: fs.readFileSync(file('server.pem'), 'utf8'),
    keyPem: fs.readFileSync(file('server.key'), 'utf8'),
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
