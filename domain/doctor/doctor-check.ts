/**
 * `svc doctor`: what a host check reports, and how the checks add up to an exit status.
 */

/** Outcome of one check: `skip` when it cannot be checked here (said why in `detail`). */
export const DoctorStatus = { pass: 'pass', warn: 'warn', fail: 'fail', skip: 'skip' } as const;
export type DoctorStatus = (typeof DoctorStatus)[keyof typeof DoctorStatus];

/** One host check with what to do about it. */
export interface DoctorCheck {
  /** Stable id, e.g. `postgres.binaries`. */
  readonly id: string;
  /** What is checked, for people. */
  readonly title: string;
  readonly status: DoctorStatus;
  /** The platform cannot work without it: a `fail` makes the doctor exit 1. An optional check fails as `warn`. */
  readonly required: boolean;
  /** What was found. */
  readonly detail: string;
  /** How to fix it, when it is not `pass`. */
  readonly fix?: string;
}

/** The doctor's verdict: ok unless a required check failed. */
export interface DoctorReport {
  readonly ok: boolean;
  readonly checks: readonly DoctorCheck[];
}

/** Builds a check; an optional check that fails is reported as `warn`. */
export function doctorCheck(check: DoctorCheck): DoctorCheck {
  const status = check.status === 'fail' && !check.required ? 'warn' : check.status;
  const { fix, ...rest } = check;
  return status === 'pass' || fix === undefined ? { ...rest, status } : { ...rest, status, fix };
}

/** The report of `checks`: ok when no required check failed. */
export function doctorReport(checks: readonly DoctorCheck[]): DoctorReport {
  return { ok: !checks.some((c) => c.required && c.status === 'fail'), checks };
}

/** Compares dotted versions (`20.18.1` >= `20.18`). */
export function versionAtLeast(version: string, minimum: string): boolean {
  const a = version.replace(/^v/, '').split('.').map(Number);
  const b = minimum.replace(/^v/, '').split('.').map(Number);
  for (let i = 0; i < Math.max(a.length, b.length); i += 1) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if (x !== y) return x > y;
  }
  return true;
}
