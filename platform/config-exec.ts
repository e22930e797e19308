/**
 * The limits of exec sessions into app processes, part of {@link VARIABLES} in config.ts.
 */
import { durationMs, wholeNumber, type VariableSpec } from './config-parsers.js';

/** Exec session limits of {@link SvcConfig}. */
export interface ExecConfig {
  /** Open exec sessions (and one-shot commands) per app. @default 4 */
  readonly execMaxSessionsPerApp: number;
  /** Open exec sessions on the platform. @default 16 */
  readonly execMaxSessions: number;
  /** An exec session without input or output this long is closed, in ms. @default 15 minutes */
  readonly execIdleTimeoutMs: number;
  /** An exec session is closed this long after it started, in ms. @default 4 hours */
  readonly execMaxDurationMs: number;
}

export const EXEC_VARIABLES = {
  execMaxSessionsPerApp: {
    name: 'SVC_EXEC_MAX_SESSIONS_PER_APP',
    description: 'Open exec sessions and one-shot exec commands per app; one more answers 429',
    defaultText: '4',
    parse: wholeNumber('SVC_EXEC_MAX_SESSIONS_PER_APP', 4, 1, 1000),
  },
  execMaxSessions: {
    name: 'SVC_EXEC_MAX_SESSIONS',
    description: 'Open exec sessions and one-shot exec commands on the platform; one more answers 429',
    defaultText: '16',
    parse: wholeNumber('SVC_EXEC_MAX_SESSIONS', 16, 1, 10000),
  },
  execIdleTimeoutMs: {
    name: 'SVC_EXEC_IDLE_TIMEOUT',
    description: 'An exec session with no input or output this long is closed',
    defaultText: '15m',
    parse: durationMs('SVC_EXEC_IDLE_TIMEOUT', 15 * 60_000),
  },
  execMaxDurationMs: {
    name: 'SVC_EXEC_MAX_DURATION',
    description: 'An exec session is closed this long after it started, active or not',
    defaultText: '4h',
    parse: durationMs('SVC_EXEC_MAX_DURATION', 4 * 3_600_000),
  },
} satisfies { [K in keyof ExecConfig]: VariableSpec<ExecConfig[K]> };
