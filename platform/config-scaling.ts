/**
 * The settings of scale to zero (the wake gateway) and of the autoscaler, part of {@link VARIABLES} in
 * config.ts.
 */
import { durationMs, httpUrl, type VariableSpec } from './config-parsers.js';

/** Scaling settings of {@link SvcConfig}. */
export interface ScalingConfig {
  /** Idle period after which a gateway-managed process is scaled to zero, in ms; 0 disables. @default 15 minutes */
  readonly wakeIdleTimeoutMs: number;
  /** Period between autoscaler evaluations, in ms; 0 disables autoscaling. @default 15 s */
  readonly autoscaleIntervalMs: number;
  /** Stabilization window of the autoscaler (lower recommendations this long before a scale-in), in ms. @default 5 minutes */
  readonly autoscaleWindowMs: number;
  /**
   * Metrics URL of the Kafka exporter the `kafka_lag` autoscaler reads (`kafka_consumergroup_lag`);
   * unset: `kafka_lag` has no source (ADR 0233).
   */
  readonly kafkaExporterUrl: string | undefined;
}

export const SCALING_VARIABLES = {
  wakeIdleTimeoutMs: {
    name: 'SVC_WAKE_IDLE_TIMEOUT',
    description: 'Idle period before a gateway-managed process (scaling.min 0) is scaled to zero; off disables',
    defaultText: '15m',
    parse: durationMs('SVC_WAKE_IDLE_TIMEOUT', 15 * 60_000, true),
  },
  autoscaleIntervalMs: {
    name: 'SVC_AUTOSCALE_INTERVAL',
    description: 'Period between autoscaler evaluations of processes with scaling.auto; off disables autoscaling',
    defaultText: '15s',
    parse: durationMs('SVC_AUTOSCALE_INTERVAL', 15_000, true),
  },
  autoscaleWindowMs: {
    name: 'SVC_AUTOSCALE_WINDOW',
    description:
      'Stabilization window: every recommendation must stay below the count this long before the autoscaler scales in (or to zero)',
    defaultText: '5m',
    parse: durationMs('SVC_AUTOSCALE_WINDOW', 5 * 60_000, false),
  },
  kafkaExporterUrl: {
    name: 'SVC_KAFKA_EXPORTER_URL',
    description:
      'Metrics URL of the Kafka exporter (kafka_consumergroup_lag) that scaling.auto metric kafka_lag follows; unset: kafka_lag has no source',
    defaultText: '(none)',
    parse: httpUrl('SVC_KAFKA_EXPORTER_URL'),
  },
} satisfies { [K in keyof ScalingConfig]: VariableSpec<ScalingConfig[K]> };
