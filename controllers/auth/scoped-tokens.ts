/**
 * Scoped access tokens of the control plane (not the knowledge store's tenant tokens): issuance (the
 * secret is returned once and kept only as its SHA-256), listing, revocation, and authentication of a bearer secret. Lookups are cached in memory and the
 * cache is dropped on every issue and revocation, so a revoked token stops working at once.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import {
  ACCESS_TOKEN_PREFIX,
  ISSUABLE_SCOPES,
  newAccessTokenSecret,
  NOT_ISSUABLE,
  type Principal,
  type Scope,
} from '../../domain/auth/index.js';
import { NotFoundError, ValidationError } from '../../domain/errors.js';
import { parseGoDuration } from '../../domain/spec/index.js';
import type { Db } from '../../store/database.js';
import {
  accessTokenBySecret,
  getAccessToken,
  insertAccessToken,
  listAccessTokens,
  revokeAccessToken,
  type AccessTokenRecord,
} from '../../store/control/scoped-tokens.js';

/** What `POST /api/access/tokens` asks for. */
export interface IssueTokenRequest {
  readonly name: string;
  readonly scopes: readonly string[];
  /** Go duration until expiry (at most a year); no value: never expires. */
  readonly expiresIn?: string;
}

/** A token as the API shows it; `token` (the secret) only in the issuance response. */
export interface AccessTokenView extends AccessTokenRecord {
  readonly state: 'active' | 'expired' | 'revoked';
}

const sha256Hex = (value: string) => createHash('sha256').update(value).digest('hex');

/** Longest allowed lifetime. */
export const MAX_TOKEN_LIFETIME_MS = 366 * 24 * 3_600_000;

export class ScopedTokens {
  private readonly cache = new Map<string, AccessTokenRecord | null>();

  constructor(private readonly options: { readonly db: Db; readonly now?: () => Date }) {}

  /** Issues a token; the secret is in the result and nowhere else. */
  issue(request: IssueTokenRequest, by: string): AccessTokenView & { readonly token: string } {
    const scopes = [...new Set(request.scopes)];
    for (const scope of scopes) {
      if (!(ISSUABLE_SCOPES as readonly string[]).includes(scope)) {
        throw new ValidationError(
          NOT_ISSUABLE[scope] !== undefined
            ? `scope ${scope} cannot be issued: ${NOT_ISSUABLE[scope]}`
            : `unknown scope ${JSON.stringify(scope)}; issuable scopes: ${ISSUABLE_SCOPES.join(', ')}`,
          {
            code: 'scope_not_issuable',
            details: { scope, issuable: ISSUABLE_SCOPES },
          },
        );
      }
    }
    const now = this.now();
    let expiresAt: string | null = null;
    if (request.expiresIn !== undefined) {
      const ms = parseGoDuration(request.expiresIn).milliseconds;
      if (ms <= 0 || ms > MAX_TOKEN_LIFETIME_MS) {
        throw new ValidationError(`expiresIn must be above zero and at most 366 days, not ${request.expiresIn}`, {
          code: 'invalid_expiry',
          details: { expiresIn: request.expiresIn },
        });
      }
      expiresAt = new Date(now.getTime() + ms).toISOString();
    }
    const token = newAccessTokenSecret((size) => randomBytes(size));
    const record: AccessTokenRecord = {
      id: `tok_${randomUUID().replace(/-/g, '').slice(0, 20)}`,
      name: request.name,
      scopes: scopes as Scope[],
      createdAt: now.toISOString(),
      createdBy: by,
      expiresAt,
      revokedAt: null,
    };
    insertAccessToken(this.options.db, record, sha256Hex(token));
    this.cache.clear();
    return { ...this.view(record), token };
  }

  list(): AccessTokenView[] {
    return listAccessTokens(this.options.db).map((record) => this.view(record));
  }

  /** Revokes a token (idempotent). */
  revoke(id: string): AccessTokenView {
    const record = revokeAccessToken(this.options.db, id, this.now());
    if (record === undefined)
      throw new NotFoundError(`no access token ${id}`, { code: 'token_not_found', details: { id } });
    this.cache.clear();
    return this.view(record);
  }

  get(id: string): AccessTokenView | undefined {
    const record = getAccessToken(this.options.db, id);
    return record ? this.view(record) : undefined;
  }

  /** The principal of a bearer secret when it is an active issued token. */
  authenticate(secret: string): Principal | undefined {
    if (!secret.startsWith(ACCESS_TOKEN_PREFIX)) return undefined;
    const hash = sha256Hex(secret);
    let record = this.cache.get(hash);
    if (record === undefined) {
      record = accessTokenBySecret(this.options.db, hash) ?? null;
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(hash, record);
    }
    if (record === null || this.view(record).state !== 'active') return undefined;
    return { kind: 'scoped-token', tokenId: record.id, name: record.name, scopes: record.scopes };
  }

  private view(record: AccessTokenRecord): AccessTokenView {
    const state =
      record.revokedAt !== null
        ? 'revoked'
        : record.expiresAt !== null && Date.parse(record.expiresAt) <= this.now().getTime()
          ? 'expired'
          : 'active';
    return { ...record, state };
  }

  private now(): Date {
    return (this.options.now ?? (() => new Date()))();
  }
}
