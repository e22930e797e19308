/**
 * A git-host app's client: an app JWT (RS256, signed with the app's private key), installation
 * tokens limited to the repositories asked for, and JSON calls to the pinned API URL through the
 * outbound guard's resolution and pinning. Shared by the bridge's verifier app and the fleet app.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { SignJWT } from 'jose';
import { UnavailableError } from '../../domain/errors.js';
import { resolveTarget } from '../outbound/outbound-guard.js';
import { sendPinned } from '../outbound/pinned-post.js';

/** Options of {@link GitHostAppClient}. */
export interface GitHostAppOptions {
  /** The pinned API base URL (`https://api.github.com`, or a stand-in's). */
  readonly apiUrl: string;
  readonly appId: string;
  readonly installationId: string;
  readonly privateKeyFile: string;
  readonly ca?: string;
  /** @default 10000 */
  readonly timeoutMs?: number;
}

/** One answer: status and parsed JSON body (`{}` when empty). */
export interface GitHostAnswer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

export class GitHostAppClient {
  constructor(private readonly options: GitHostAppOptions) {}

  /** A fresh app JWT, valid nine minutes (issued a minute in the past against clock skew). */
  async appJwt(): Promise<string> {
    const key = crypto.createPrivateKey(fs.readFileSync(this.options.privateKeyFile, 'utf8'));
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({})
      .setProtectedHeader({ alg: 'RS256' })
      .setIssuer(this.options.appId)
      .setIssuedAt(now - 60)
      .setExpirationTime(now + 540)
      .sign(key);
  }

  /** The installation (`repository_selection` tells whether it is repository-scoped). */
  async installation(): Promise<Record<string, unknown>> {
    return this.expect(
      await this.call('GET', `/app/installations/${this.options.installationId}`, await this.appJwt()),
      [200],
    );
  }

  /** An installation token limited to `scope` (`repository_ids` or `repositories`) and `permissions`. */
  async installationToken(
    scope: { repository_ids?: number[]; repositories?: string[] },
    permissions: Record<string, string>,
  ): Promise<string> {
    const answer = this.expect(
      await this.call('POST', `/app/installations/${this.options.installationId}/access_tokens`, await this.appJwt(), {
        ...scope,
        permissions,
      }),
      [201],
    );
    if (typeof answer.token !== 'string') throw unavailable('answered no installation token');
    return answer.token;
  }

  /** Throws unless the answer's status is one of `ok`; returns its body. */
  expect(answer: GitHostAnswer, ok: readonly number[], what = 'the call'): Record<string, unknown> {
    if (!ok.includes(answer.status)) throw unavailable(`answered ${what} with ${answer.status}`);
    return answer.body;
  }

  async call(method: 'GET' | 'POST' | 'PUT', pathname: string, bearer: string, body?: unknown): Promise<GitHostAnswer> {
    const url = new URL(`${this.options.apiUrl.replace(/\/+$/, '')}${pathname}`);
    let response;
    try {
      response = await sendPinned(url, await resolveTarget(url, { allowPrivate: true }), {
        method,
        headers: {
          authorization: `Bearer ${bearer}`,
          accept: 'application/vnd.github+json',
          'user-agent': 'svc-fleet-authority',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? '' : JSON.stringify(body),
        timeoutMs: this.options.timeoutMs ?? 10_000,
        bodyLimit: 4 * 1024 * 1024,
        ...(this.options.ca === undefined ? {} : { ca: this.options.ca }),
      });
    } catch (error) {
      throw unavailable(`cannot be reached (${(error as Error).message})`);
    }
    const text = response.body.toString('utf8');
    if (text === '') return { status: response.status, body: {} };
    try {
      return { status: response.status, body: JSON.parse(text) as Record<string, unknown> };
    } catch {
      throw unavailable(`answered ${method} ${pathname} with a body that is not JSON`);
    }
  }
}

function unavailable(what: string): UnavailableError {
  return new UnavailableError(`the git-host API ${what}`, { code: 'git_host_unavailable', retryAfterSeconds: 5 });
}
