/**
 * A risk an operator view points out: a stable code, a severity and a message naming the subject.
 */

/** How urgent a risk is, from most to least. */
export const RiskSeverity = { critical: 'critical', warning: 'warning', info: 'info' } as const;
export type RiskSeverity = (typeof RiskSeverity)[keyof typeof RiskSeverity];

/** One risk. */
export interface OperatorRisk {
  readonly code: string;
  readonly severity: RiskSeverity;
  readonly message: string;
}

const ORDER: Record<RiskSeverity, number> = { critical: 0, warning: 1, info: 2 };

/** Compares severities, most urgent first. */
export function bySeverity(a: { readonly severity: RiskSeverity }, b: { readonly severity: RiskSeverity }): number {
  return ORDER[a.severity] - ORDER[b.severity];
}

/** The most urgent severity of `risks`, or undefined for none. */
export function worstSeverity(risks: readonly { readonly severity: RiskSeverity }[]): RiskSeverity | undefined {
  return [...risks].sort(bySeverity)[0]?.severity;
}
