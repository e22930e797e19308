/**
 * The settings of operations: the push webhooks that start them, the drain gate and the operation worker, part
 * of {@link VARIABLES} in config.ts.
 */
import { ConfigError } from '../domain/errors.js';
import { durationMs, oneOf, optional, type VariableSpec } from './config-parsers.js';

/** Operation settings of {@link SvcConfig}. */
export interface OperationConfig {
  /** Shared secret of the push webhooks (X-Hub-Signature-256); never logged. Unset: webhooks are refused. */
  readonly webhookSecret: string | undefined;
  /** Behaviour while operations are active and the platform drains: fail, wait or force. @default fail */
  readonly drainMode: 'fail' | 'wait' | 'force';
  /** Operations run at once by the worker (never two of one app). @default 2 */
  readonly operationWorkers: number;
  /** Lease of a claimed operation, renewed by heartbeat, in ms. @default 30 s */
  readonly operationLeaseMs: number;
}

export const OPERATION_VARIABLES = {
  webhookSecret: {
    name: 'SVC_WEBHOOK_SECRET',
    description: 'Shared secret of the push webhooks (HMAC-SHA-256, X-Hub-Signature-256); unset refuses webhooks',
    secret: true,
    defaultText: '(none: webhooks refused)',
    parse: optional,
  },
  drainMode: {
    name: 'SVC_DRAIN_MODE',
    description:
      'While operations are active and the platform drains: fail (refuse), wait (for completion) or force (skip the gate)',
    defaultText: 'fail',
    parse: oneOf('SVC_DRAIN_MODE', ['fail', 'wait', 'force'] as const, 'fail'),
  },
  operationWorkers: {
    name: 'SVC_OPERATION_WORKERS',
    description: 'Operations run at once (never two of one app)',
    defaultText: '2',
    parse: (raw) => {
      const value = optional(raw) ?? '2';
      if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 64)
        throw new ConfigError('SVC_OPERATION_WORKERS', `"${value}" is not a whole number in 1-64`);
      return Number(value);
    },
  },
  operationLeaseMs: {
    name: 'SVC_OPERATION_LEASE',
    description: 'Lease of a claimed operation, renewed by heartbeat; an expired lease is recovered',
    defaultText: '30s',
    parse: durationMs('SVC_OPERATION_LEASE', 30_000),
  },
} satisfies { [K in keyof OperationConfig]: VariableSpec<OperationConfig[K]> };
