/**
 * The state a receipt digests for each kind of target: what a mutation of it changes. Digests are
 * SHA-256 of canonical JSON over records that hold no secret value (token records carry no secret;
 * encrypted-secret records carry ciphertext digests only).
 */
import fs from 'node:fs';
import { canonicalDigest } from '../../domain/canonical-json.js';
import type { Db } from '../../store/database.js';
import { getApp } from '../../store/control/apps.js';
import { listAccessTokens } from '../../store/control/scoped-tokens.js';
import { recentPlatformStarts } from '../../store/control/platform-releases.js';
import { encryptedSourcesFile } from '../secrets/encrypted-secrets.js';
import type { TargetDigest } from './audit-receipts.js';

/** Options of `targetDigest`. */
export interface TargetDigestOptions {
  readonly db: Db;
  /** The folder of `secret-sources/` (the hosted folder). */
  readonly hostedDir: string;
}

/**
 * Digests `app:<name>` (spec generations, release, deletion and its encrypted-secret sources),
 * `tokens` (every access token record) and `platform` (the running release); null otherwise.
 */
export function targetDigest(options: TargetDigestOptions): TargetDigest {
  return (target) => {
    if (target.startsWith('app:')) {
      const name = target.slice('app:'.length);
      const row = getApp(options.db, name);
      let secretSources: unknown = null;
      try {
        secretSources = JSON.parse(fs.readFileSync(encryptedSourcesFile(options.hostedDir, name), 'utf8'));
      } catch {
        // No encrypted secrets delivered yet.
      }
      return canonicalDigest({
        app: name,
        exists: row !== undefined,
        generation: row?.generation ?? null,
        committed: row?.committedSpec ? canonicalDigest(row.committedSpec) : null,
        release: row?.release ?? null,
        deletedAt: row?.deletedAt ?? null,
        secretSources,
      });
    }
    if (target === 'tokens') return canonicalDigest(listAccessTokens(options.db));
    if (target === 'platform') return canonicalDigest(recentPlatformStarts(options.db, 1));
    return null;
  };
}
