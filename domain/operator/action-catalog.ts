/**
 * Operator action descriptors: the mutations an operator client (a phone included) may offer, each
 * with its method, path, the JSON Schema of its body (taken from the route's own validator), a risk
 * level and whether it needs explicit confirmation.
 *
 * Risk (spec, Operator views): acknowledge, snooze or resolve an incident low; run a preflight low;
 * trigger, pause or resume cron medium; deploy, roll back or restore a snapshot high. Beyond the
 * spec's list (for the operator console, docs/adr/0130): taking a snapshot is low, promoting
 * canaries and turning a public endpoint on or off high. High risk always needs explicit confirmation.
 */

/** How much an action can change or break. */
export const ActionRisk = { low: 'low', medium: 'medium', high: 'high' } as const;
export type ActionRisk = (typeof ActionRisk)[keyof typeof ActionRisk];

/** The body schemas of the real route validators the catalog describes. */
export interface ActionSchemas {
  /** `POST /api/incidents/action`. */
  readonly incidentAction: object;
  /** `POST /api/apps/{id}/cron/trigger|pause|resume`. */
  readonly cronAction: object;
  /** `POST /api/apps/{id}/deploy` and `/preflight`. */
  readonly deploy: object;
  /** `POST /api/apps/{id}/rollback`. */
  readonly rollback: object;
  /** `POST /api/v1/apps/{id}/snapshots/{filename}/restore`. */
  readonly snapshotRestore: object;
  /** `POST /api/v1/apps/{id}/snapshots` (take one now). */
  readonly snapshotTake: object;
  /** `POST /api/apps/{id}/canary/promote`. */
  readonly canaryPromote: object;
  /** `POST /api/apps/{id}/endpoints/toggle`. */
  readonly endpointToggle: object;
}

/** A request header an action needs. */
export interface ActionHeader {
  readonly name: string;
  readonly required: boolean;
  readonly description: string;
}

/** One action an operator client can offer. */
export interface ActionDescriptor {
  readonly id: string;
  readonly title: string;
  readonly method: 'POST' | 'PUT';
  /** Path with `{placeholders}` named in `parameters`. */
  readonly path: string;
  readonly parameters: readonly { readonly name: string; readonly description: string }[];
  readonly headers: readonly ActionHeader[];
  /** JSON Schema of the request body. */
  readonly schema: object;
  readonly risk: ActionRisk;
  /** True when a phone can complete it with the identifiers the operator views already show. */
  readonly mobileReady: boolean;
  readonly confirmation: { readonly required: boolean; readonly prompt: string | null };
  /** The view that lists the subjects of this action. */
  readonly discoveredFrom: string;
}

const IDEMPOTENCY: ActionHeader = {
  name: 'Idempotency-Key',
  required: false,
  description: 'a client-chosen key; a retry with the same key and body replays the first answer',
};
const APP = { name: 'id', description: 'the app name' };

/** `schema` with property `name` pinned to `value` (the action field of a multi-action route). */
export function pinProperty(schema: object, name: string, value: string): object {
  const base = schema as { properties?: Record<string, unknown> };
  return { ...base, properties: { ...(base.properties ?? {}), [name]: { const: value } } };
}

type Draft = Omit<ActionDescriptor, 'confirmation' | 'headers'> & {
  readonly headers?: readonly ActionHeader[];
  readonly prompt?: string;
};

/** Every action descriptor, built on the route schemas. */
export function actionCatalog(schemas: ActionSchemas): ActionDescriptor[] {
  const incident = (action: 'acknowledge' | 'snooze' | 'resolve', title: string): Draft => ({
    id: `incident.${action}`,
    title,
    method: 'POST',
    path: '/api/incidents/action',
    parameters: [],
    schema: pinProperty(schemas.incidentAction, 'action', action),
    risk: 'low',
    mobileReady: true,
    discoveredFrom: 'GET /api/operator/inbox (incidents[].correlationKey, source, app, environment)',
  });
  const cron = (action: 'trigger' | 'pause' | 'resume', title: string): Draft => ({
    id: `cron.${action}`,
    title,
    method: 'POST',
    path: `/api/apps/{id}/cron/${action}`,
    parameters: [APP],
    headers: [IDEMPOTENCY],
    schema: schemas.cronAction,
    risk: 'medium',
    mobileReady: true,
    discoveredFrom: 'GET /api/operator/cron (processes[].actions)',
  });
  const drafts: Draft[] = [
    incident('acknowledge', 'Acknowledge an incident'),
    incident('snooze', 'Snooze an incident'),
    incident('resolve', 'Resolve an incident'),
    cron('trigger', 'Run a scheduled process now'),
    cron('pause', 'Pause a scheduled process'),
    cron('resume', 'Resume a scheduled process'),
    {
      id: 'app.preflight',
      title: 'Run a read-only preflight of an app',
      method: 'POST',
      path: '/api/apps/{id}/preflight',
      parameters: [APP],
      headers: [IDEMPOTENCY],
      schema: schemas.deploy,
      risk: 'low',
      mobileReady: true,
      discoveredFrom: 'GET /api/operator/deploy-confidence',
    },
    {
      id: 'app.deploy',
      title: 'Deploy an app',
      method: 'POST',
      path: '/api/apps/{id}/deploy',
      parameters: [APP],
      headers: [IDEMPOTENCY],
      schema: schemas.deploy,
      risk: 'high',
      mobileReady: true,
      discoveredFrom: 'GET /api/operator/deploy-confidence',
      prompt: 'Deploy {id} at the given ref (default HEAD)? Running processes are replaced.',
    },
    {
      id: 'app.rollback',
      title: 'Roll an app back to its last successful release',
      method: 'POST',
      path: '/api/apps/{id}/rollback',
      parameters: [APP],
      headers: [IDEMPOTENCY],
      schema: schemas.rollback,
      risk: 'high',
      mobileReady: true,
      discoveredFrom: 'GET /api/operator/deploy-confidence',
      prompt: 'Roll {id} back to its last successful release?',
    },
    {
      id: 'snapshot.restore',
      title: 'Restore an app database from a snapshot',
      method: 'POST',
      path: '/api/v1/apps/{id}/snapshots/{filename}/restore',
      parameters: [APP, { name: 'filename', description: 'an inventory file name (GET /api/v1/apps/{id}/snapshots)' }],
      headers: [{ ...IDEMPOTENCY, required: true }],
      schema: schemas.snapshotRestore,
      risk: 'high',
      mobileReady: true,
      discoveredFrom: 'GET /api/operator/snapshot-readiness (apps[].latestRestorePoint)',
      prompt: 'Replace the contents of the database of {id} with {filename}? This cannot be undone.',
    },
    {
      id: 'snapshot.take',
      title: 'Take a snapshot of an app database now',
      method: 'POST',
      path: '/api/v1/apps/{id}/snapshots',
      parameters: [APP],
      headers: [{ ...IDEMPOTENCY, required: true }],
      schema: schemas.snapshotTake,
      risk: 'low',
      mobileReady: true,
      discoveredFrom: 'GET /api/operator/snapshot-readiness (apps[])',
    },
    {
      id: 'canary.promote',
      title: 'Promote the waiting canaries of an app',
      method: 'POST',
      path: '/api/apps/{id}/canary/promote',
      parameters: [APP],
      headers: [IDEMPOTENCY],
      schema: schemas.canaryPromote,
      risk: 'high',
      mobileReady: true,
      discoveredFrom: 'GET /api/operator/deploy-confidence (awaitingPromotion)',
      prompt: 'Promote the canaries of {id} now? Every allocation is replaced by the new version.',
    },
    {
      id: 'endpoint.toggle',
      title: 'Turn a public endpoint of an app on or off',
      method: 'POST',
      path: '/api/apps/{id}/endpoints/toggle',
      parameters: [APP],
      headers: [],
      schema: schemas.endpointToggle,
      risk: 'high',
      mobileReady: true,
      discoveredFrom: 'GET /api/tunnel/ingress (rules[].hostname, disabled[])',
      prompt: 'Change the routing of {hostname} of {id}? Turned off, it receives no public traffic.',
    },
  ];
  return drafts.map(({ prompt, headers, ...draft }) => ({
    ...draft,
    headers: headers ?? [],
    confirmation:
      draft.risk === 'high'
        ? { required: true, prompt: prompt ?? `Run ${draft.title.toLowerCase()}?` }
        : { required: false, prompt: null },
  }));
}

/** The catalog filtered by risk and mobile readiness. */
export function filterActions(
  actions: readonly ActionDescriptor[],
  filter: { readonly risk?: ActionRisk; readonly mobileReady?: boolean },
): ActionDescriptor[] {
  return actions.filter(
    (a) =>
      (filter.risk === undefined || a.risk === filter.risk) &&
      (filter.mobileReady === undefined || a.mobileReady === filter.mobileReady),
  );
}
