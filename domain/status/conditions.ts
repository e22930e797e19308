/**
 * Status conditions of an app, Kubernetes style: each condition says whether one aspect holds,
 * why (a CamelCase reason), a human message, and when its status last changed.
 */

/** The condition types every app record carries. */
export const ConditionType = {
  valid: 'Valid',
  deployed: 'Deployed',
  healthy: 'Healthy',
  routed: 'Routed',
  ready: 'Ready',
} as const;
export type ConditionType = (typeof ConditionType)[keyof typeof ConditionType];

export const ConditionStatus = { true: 'True', false: 'False', unknown: 'Unknown' } as const;
export type ConditionStatus = (typeof ConditionStatus)[keyof typeof ConditionStatus];

/** One observed aspect of an app. */
export interface Condition {
  readonly type: ConditionType;
  readonly status: ConditionStatus;
  readonly reason: string;
  readonly message: string;
  /** ISO 8601; changes only when `status` changes. */
  readonly lastTransitionTime: string;
}

/** A condition as a reconciler computes it (the transition time is filled in by `setCondition`). */
export type ConditionInput = Omit<Condition, 'lastTransitionTime'>;

/**
 * Returns `conditions` with `input` set: the transition time is kept when the status is unchanged,
 * and the list stays in the canonical order.
 */
export function setCondition(conditions: readonly Condition[], input: ConditionInput, now: Date): Condition[] {
  const previous = conditions.find((c) => c.type === input.type);
  const lastTransitionTime =
    previous && previous.status === input.status ? previous.lastTransitionTime : now.toISOString();
  const next = conditions.filter((c) => c.type !== input.type);
  next.push({ ...input, lastTransitionTime });
  const order = Object.values(ConditionType) as string[];
  return next.sort((a, b) => order.indexOf(a.type) - order.indexOf(b.type));
}

/** The condition of `type`, if set. */
export function getCondition(conditions: readonly Condition[], type: ConditionType): Condition | undefined {
  return conditions.find((c) => c.type === type);
}

/**
 * Derives the summary `Ready` condition: true only when every other set condition is true.
 * An aspect that does not apply (e.g. `Routed` for an app without endpoints) is reported True with
 * reason `NotApplicable` by its reconciler.
 */
export function summarizeReady(conditions: readonly Condition[], now: Date): Condition[] {
  const aspects = conditions.filter((c) => c.type !== ConditionType.ready);
  const failing = aspects.filter((c) => c.status !== ConditionStatus.true);
  const input: ConditionInput =
    aspects.length === 0
      ? { type: 'Ready', status: 'Unknown', reason: 'NotObserved', message: 'no condition observed yet' }
      : failing.length === 0
        ? { type: 'Ready', status: 'True', reason: 'AllConditionsTrue', message: 'valid, deployed, healthy and routed' }
        : {
            type: 'Ready',
            status: failing.some((c) => c.status === 'False') ? 'False' : 'Unknown',
            reason: `${failing[0]!.type}${failing[0]!.status === 'False' ? 'False' : 'Unknown'}`,
            message: failing.map((c) => `${c.type}: ${c.message}`).join('; '),
          };
  return setCondition(conditions, input, now);
}
