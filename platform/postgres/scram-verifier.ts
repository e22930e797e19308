/**
 * SCRAM-SHA-256 password verifiers (RFC 5802, RFC 7677) in PostgreSQL's stored form. Setting a role's
 * password to its verifier means the plain password never reaches the server, its logs or its
 * statistics: only the platform's 0600 file and the app's password file hold it.
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';

/** PostgreSQL's default iteration count (`scram_iterations`). */
const ITERATIONS = 4096;

/**
 * `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>` for `password`. The password must be
 * ASCII without control characters (SASLprep leaves it unchanged), as generated passwords are.
 */
export function scramSha256Verifier(password: string, salt: Buffer = randomBytes(16), iterations = ITERATIONS): string {
  if (!/^[\x21-\x7e]+$/.test(password))
    throw new Error('a SCRAM verifier is only computed here for printable ASCII passwords');
  const salted = pbkdf2Sync(password, salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}
