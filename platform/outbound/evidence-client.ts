/**
 * The evidence service client of the external-admission bridge (the {@link EvidenceService} port).
 *
 * The service is one HTTPS origin whose addresses must all lie inside the configured CIDRs (checked
 * by the outbound guard's resolution, then pinned: the connection goes to a checked address).
 * Registration authenticates with the registration token, claim, commit and status with the
 * verifier token; neither token ever appears in an error or a log. Wire format: ADR 0153.
 */
import net from 'node:net';
import { ConflictError, UnavailableError } from '../../domain/errors.js';
import {
  EVIDENCE_SCHEMA_VERSION,
  type EvidenceClaim,
  type EvidenceCommit,
  type EvidenceRegistration,
  type EvidenceService,
  type EvidenceSnapshot,
  type EvidenceStatus,
} from '../../domain/fleet/evidence-port.js';
import { resolveTarget } from './outbound-guard.js';
import { sendPinned } from './pinned-post.js';

/** Options of {@link HttpEvidenceService}. */
export interface EvidenceClientOptions {
  /** The service's HTTPS origin. */
  readonly origin: string;
  readonly allowedCidrs: readonly string[];
  readonly verifierToken: string;
  readonly registrationToken: string;
  /** Extra trusted CA certificates (PEM). */
  readonly ca?: string;
  /** @default 10000 */
  readonly timeoutMs?: number;
  readonly resolve?: (host: string) => Promise<readonly string[]>;
}

function cidrList(cidrs: readonly string[]): net.BlockList {
  const list = new net.BlockList();
  for (const cidr of cidrs) {
    const [address = '', prefix = ''] = cidr.split('/');
    list.addSubnet(address, Number(prefix), net.isIP(address) === 6 ? 'ipv6' : 'ipv4');
  }
  return list;
}

export class HttpEvidenceService implements EvidenceService {
  readonly #options: EvidenceClientOptions;
  readonly #allowed: net.BlockList;

  constructor(options: EvidenceClientOptions) {
    this.#options = options;
    this.#allowed = cidrList(options.allowedCidrs);
  }

  async register(r: EvidenceRegistration): Promise<{ revision: number }> {
    const body = { schemaVersion: EVIDENCE_SCHEMA_VERSION, ...r };
    const answer = await this.#call(
      'PUT',
      this.#path(r.admissionId, r.generation),
      this.#options.registrationToken,
      body,
    );
    return { revision: revisionOf(answer) };
  }

  async claim(c: EvidenceClaim): Promise<{ revision: number; snapshot: EvidenceSnapshot }> {
    const answer = await this.#call(
      'POST',
      `${this.#path(c.admissionId, c.generation)}/claim`,
      this.#options.verifierToken,
      { schemaVersion: EVIDENCE_SCHEMA_VERSION, ...c },
    );
    return { revision: revisionOf(answer), snapshot: answer.snapshot as EvidenceSnapshot };
  }

  async commit(c: EvidenceCommit): Promise<{ revision: number }> {
    const answer = await this.#call(
      'POST',
      `${this.#path(c.admissionId, c.generation)}/commit`,
      this.#options.verifierToken,
      { schemaVersion: EVIDENCE_SCHEMA_VERSION, ...c },
    );
    return { revision: revisionOf(answer) };
  }

  async status(admissionId: string, generation: number): Promise<EvidenceStatus> {
    const answer = await this.#call(
      'GET',
      `${this.#path(admissionId, generation)}/status`,
      this.#options.verifierToken,
      undefined,
    );
    if (answer.schemaVersion !== EVIDENCE_SCHEMA_VERSION)
      throw unavailable('answered a status of another schema version');
    return answer as unknown as EvidenceStatus;
  }

  #path(admissionId: string, generation: number): string {
    return `/v4/admissions/${encodeURIComponent(admissionId)}/generations/${generation}`;
  }

  async #call(
    method: 'GET' | 'POST' | 'PUT',
    pathname: string,
    token: string,
    body: unknown,
  ): Promise<Record<string, unknown>> {
    const url = new URL(pathname, this.#options.origin);
    let response;
    try {
      const target = await resolveTarget(url, {
        allowPrivate: true,
        ...(this.#options.resolve ? { resolve: this.#options.resolve } : {}),
      });
      for (const { address, family } of target.all) {
        if (!this.#allowed.check(address, family === 6 ? 'ipv6' : 'ipv4'))
          throw unavailable(`resolves to ${address}, outside SVC_EXTERNAL_FLEET_EVIDENCE_ALLOWED_CIDRS`);
      }
      response = await sendPinned(url, target, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? '' : JSON.stringify(body),
        timeoutMs: this.#options.timeoutMs ?? 10_000,
        bodyLimit: 1024 * 1024,
        ...(this.#options.ca === undefined ? {} : { ca: this.#options.ca }),
      });
    } catch (error) {
      if (error instanceof UnavailableError) throw error;
      throw unavailable(`cannot be reached (${(error as Error).message})`);
    }
    let parsed: Record<string, unknown> = {};
    try {
      parsed = JSON.parse(response.body.toString('utf8')) as Record<string, unknown>;
    } catch {
      if (response.status < 300) throw unavailable(`answered ${method} ${pathname} with a body that is not JSON`);
    }
    if (response.status === 409) {
      throw new ConflictError(
        `the evidence service refused ${method} ${pathname}: revision ${typeof parsed.revision === 'number' ? parsed.revision : '?'} does not match (compare-and-set)`,
        { code: 'evidence_revision_conflict', details: { revision: parsed.revision ?? null } },
      );
    }
    if (response.status < 200 || response.status >= 300)
      throw unavailable(`answered ${method} ${pathname} with ${response.status}`);
    return parsed;
  }
}

function revisionOf(answer: Record<string, unknown>): number {
  if (answer.schemaVersion !== EVIDENCE_SCHEMA_VERSION || typeof answer.revision !== 'number')
    throw unavailable('answered without a v4 schema version and a revision');
  return answer.revision;
}

function unavailable(what: string): UnavailableError {
  return new UnavailableError(`the evidence service ${what}`, {
    code: 'evidence_service_unavailable',
    retryAfterSeconds: 5,
  });
}
