/**
 * Deploy lifecycle events (deploy.*, rollback.*, canary.promoted) sent through the event port,
 * correlated by `<app>:deploy` or `<app>:rollback`, never carrying secrets.
 */
import type { EventEmitterPort, Severity } from '../../domain/events/index.js';
import type { Logger } from '../../platform/logger.js';
import type { Deployment } from '../../store/control/deployments.js';

/** The deploy event types this pipeline emits. */
export const DeployEventType = {
  succeeded: 'deploy.succeeded',
  failed: 'deploy.failed',
  autoRollback: 'deploy.auto_rollback',
  canaryPromoted: 'canary.promoted',
  rollbackSucceeded: 'rollback.succeeded',
  rollbackFailed: 'rollback.failed',
} as const;
export type DeployEventType = (typeof DeployEventType)[keyof typeof DeployEventType];

const SEVERITY: Record<DeployEventType, Severity> = {
  'deploy.succeeded': 'info',
  'deploy.failed': 'critical',
  'deploy.auto_rollback': 'warning',
  'canary.promoted': 'info',
  'rollback.succeeded': 'info',
  'rollback.failed': 'critical',
};

const PREVIOUS: Partial<Record<DeployEventType, DeployEventType>> = {
  'deploy.auto_rollback': 'deploy.failed',
  'rollback.succeeded': 'deploy.auto_rollback',
};

/** Emits one deploy event; a failing event services is logged, never fails the deploy. */
export async function emitDeployEvent(
  events: EventEmitterPort,
  logger: Logger,
  type: DeployEventType,
  deployment: Pick<Deployment, 'id' | 'sagaId' | 'app' | 'commit'>,
  content: { title: string; body?: string; step?: string; extra?: Record<string, unknown> },
): Promise<void> {
  const family = type.startsWith('rollback.') ? 'rollback' : 'deploy';
  try {
    await events.emit({
      type,
      severity: SEVERITY[type],
      app: deployment.app,
      title: content.title,
      ...(content.body !== undefined ? { body: content.body } : {}),
      dedupeKey: `${type}:${deployment.id}`,
      metadata: {
        deploymentId: deployment.id,
        sagaId: deployment.sagaId,
        correlationKey: `${deployment.app}:${family}`,
        ...(content.step !== undefined ? { step: content.step } : {}),
        ...(deployment.commit ? { commit: deployment.commit } : {}),
        ...(PREVIOUS[type] ? { previousEventType: PREVIOUS[type] } : {}),
        ...(content.extra ?? {}),
      },
    });
  } catch (error) {
    logger.error({ err: error, type, deploymentId: deployment.id }, 'event emission failed');
  }
}
