/**
 * The external admissions the restricted-mode routes serve: who calls, what a call answers, the six
 * calls, and the stand-in that refuses every call when no verifier is configured.
 */
import { UnavailableError } from '../../domain/errors.js';
import type { CiContext } from '../../domain/fleet/evidence-port.js';
import type { AdmissionContext } from './admission-view.js';

/** The workload identity calling (from its exchanged token). */
export interface AdmissionCaller extends CiContext {
  readonly tokenId: string;
}

/** A route's answer: status, body and, for the first commit, the operation's location. */
export interface AdmissionResult {
  readonly status: 200 | 201;
  readonly body: AdmissionContext & {
    readonly replayed?: boolean;
    readonly nonce?: string;
    readonly nonceExpiresAt?: string;
  };
  readonly location?: string;
}

/** The six admission calls the routes serve. */
export interface ExternalAdmissions {
  begin(app: string, caller: AdmissionCaller, clientKey: string, body: unknown): Promise<AdmissionResult>;
  admit(app: string, caller: AdmissionCaller, clientKey: string, body: unknown): Promise<AdmissionResult>;
  resume(app: string, caller: AdmissionCaller, clientKey: string, body: unknown): Promise<AdmissionResult>;
  reconcile(app: string, caller: AdmissionCaller, body: unknown): Promise<AdmissionResult>;
  cleanup(app: string, caller: AdmissionCaller, body: unknown): Promise<AdmissionResult>;
  context(app: string, caller: AdmissionCaller, admissionId: string): Promise<AdmissionContext>;
}

/** Without a configured verifier every call fails this way, and nothing is recorded. */
export function verifierUnavailable(): UnavailableError {
  return new UnavailableError(
    'external admission has no configured verifier (the SVC_EXTERNAL_FLEET_* bridge settings are not set); nothing was recorded',
    { code: 'external_deployment_verifier_unavailable' },
  );
}

/** The bridge when it is not configured. */
export const UNCONFIGURED_ADMISSIONS: ExternalAdmissions = {
  begin: () => Promise.reject(verifierUnavailable()),
  admit: () => Promise.reject(verifierUnavailable()),
  resume: () => Promise.reject(verifierUnavailable()),
  reconcile: () => Promise.reject(verifierUnavailable()),
  cleanup: () => Promise.reject(verifierUnavailable()),
  context: () => Promise.reject(verifierUnavailable()),
};
