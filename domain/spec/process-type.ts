/**
 * Process types: what kind of scheduler work a process of an app spec becomes, inferred from the fields it sets.
 */

/**
 * The kinds of process.
 *
 * - `service`: long-running, listens on `port`, can have health checks and endpoints.
 * - `worker`: long-running without a port (none of `port`, `schedule`, `function` is set), for example a queue consumer.
 * - `periodic`: a batch job started by its cron `schedule`.
 * - `function`: a batch job started only when invoked (`function`).
 */
export const ProcessType = {
  service: 'service',
  worker: 'worker',
  periodic: 'periodic',
  function: 'function',
} as const;
export type ProcessType = (typeof ProcessType)[keyof typeof ProcessType];

/** The fields that decide a process's type. */
export interface ProcessTypeFields {
  readonly port?: unknown;
  readonly schedule?: unknown;
  readonly function?: unknown;
}

/**
 * Infers the type of a process: `schedule` makes it periodic, `function` a function, `port` a service, none a worker.
 * A process that sets fields of several types is invalid (see {@link conflictingProcessTypeFields}); this still
 * answers, in that precedence order.
 */
export function inferProcessType(process: ProcessTypeFields): ProcessType {
  if (process.schedule !== undefined) return ProcessType.periodic;
  if (process.function !== undefined) return ProcessType.function;
  if (process.port !== undefined) return ProcessType.service;
  return ProcessType.worker;
}

/** The type-deciding fields a process sets, when it sets more than one of them (otherwise empty). */
export function conflictingProcessTypeFields(process: ProcessTypeFields): Array<'port' | 'schedule' | 'function'> {
  const set = (['schedule', 'function', 'port'] as const).filter((field) => process[field] !== undefined);
  return set.length > 1 ? set : [];
}
