/**
 * Knowledge store tenant tokens `tenant:permissions:secret` from the configuration (docs/adr/0026); not the
 * control plane's scoped access tokens (controllers/auth/scoped-tokens.ts).
 *
 * Tokens come from `SVC_KNOWLEDGE_TOKENS` (comma separated) and `SVC_KNOWLEDGE_TOKENS_FILE` (one
 * per line, `#` comments). Only SHA-256 hashes of secrets are kept; a presented token is matched
 * by tenant and permission list, then its secret is compared in constant time.
 */
import fs from 'node:fs';
import { ConfigError } from '../../domain/errors.js';
import { secretEquals, sha256Hex } from '../http/bearer.js';

/** Permissions a token can grant. */
export const Permission = { read: 'read', write: 'write', admin: 'admin' } as const;
export type Permission = (typeof Permission)[keyof typeof Permission];
const PERMISSIONS: readonly string[] = Object.values(Permission);

/** Who made a request and what they may do. */
export interface Principal {
  readonly tenant: string;
  readonly permissions: ReadonlySet<Permission>;
}

/** The tenant every request acts as when no tokens are configured. */
export const OPEN_TENANT = 'default';

interface TokenEntry {
  readonly tenant: string;
  readonly permissionText: string;
  readonly permissions: ReadonlySet<Permission>;
  readonly secretHash: string;
}

const TENANT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

function parseEntry(text: string, where: string): TokenEntry {
  const first = text.indexOf(':');
  const second = first < 0 ? -1 : text.indexOf(':', first + 1);
  if (first < 0 || second < 0) throw new ConfigError(where, 'a token must be tenant:permissions:secret');
  const tenant = text.slice(0, first);
  const permissionText = text.slice(first + 1, second);
  const secret = text.slice(second + 1);
  if (!TENANT.test(tenant)) throw new ConfigError(where, `tenant "${tenant}" must be letters, digits, '.', '_' or '-'`);
  const permissions = permissionText.split('+');
  for (const p of permissions) {
    if (!PERMISSIONS.includes(p))
      throw new ConfigError(where, `permission "${p}" is not one of ${PERMISSIONS.join(', ')}`);
  }
  if (secret.length < 8) throw new ConfigError(where, `the secret of tenant "${tenant}" must be at least 8 characters`);
  const granted = new Set(permissions as Permission[]);
  // write and admin imply read: a writer must be able to read back what it wrote.
  if (granted.has('write') || granted.has('admin')) granted.add('read');
  return { tenant, permissionText, permissions: granted, secretHash: sha256Hex(secret) };
}

/** The configured token set; empty means the store runs open. */
export class TenantTokens {
  readonly #entries: readonly TokenEntry[];

  private constructor(entries: readonly TokenEntry[]) {
    this.#entries = entries;
  }

  /** Parses the variable and the file (either may be absent). Throws ConfigError naming the source. */
  static load(tokens: string | undefined, file: string | undefined): TenantTokens {
    const entries: TokenEntry[] = [];
    for (const part of (tokens ?? '').split(',')) {
      const text = part.trim();
      if (text !== '') entries.push(parseEntry(text, 'SVC_KNOWLEDGE_TOKENS'));
    }
    if (file !== undefined) {
      let body: string;
      try {
        body = fs.readFileSync(file, 'utf8');
      } catch (cause) {
        throw new ConfigError('SVC_KNOWLEDGE_TOKENS_FILE', `cannot read the token file: ${(cause as Error).message}`);
      }
      body.split(/\r?\n/).forEach((line, i) => {
        const text = line.trim();
        if (text !== '' && !text.startsWith('#'))
          entries.push(parseEntry(text, `SVC_KNOWLEDGE_TOKENS_FILE line ${i + 1}`));
      });
    }
    return new TenantTokens(entries);
  }

  /** True when no token is configured (open mode). */
  get open(): boolean {
    return this.#entries.length === 0;
  }

  get count(): number {
    return this.#entries.length;
  }

  /** The principal a presented bearer token authenticates as, or undefined. */
  authenticate(token: string): Principal | undefined {
    const first = token.indexOf(':');
    const second = first < 0 ? -1 : token.indexOf(':', first + 1);
    if (first < 0 || second < 0) return undefined;
    const tenant = token.slice(0, first);
    const permissionText = token.slice(first + 1, second);
    const secret = token.slice(second + 1);
    let found: TokenEntry | undefined;
    for (const entry of this.#entries) {
      // Compare every candidate so timing does not depend on which entry matched.
      const match =
        entry.tenant === tenant && entry.permissionText === permissionText && secretEquals(secret, entry.secretHash);
      if (match && !found) found = entry;
    }
    return found ? { tenant: found.tenant, permissions: found.permissions } : undefined;
  }
}
