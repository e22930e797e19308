/**
 * Exec limits (ADR 0168): sessions per app and in total, the idle timeout, the maximum duration, how
 * long a created session waits to be attached, and the one-shot command's timeout and output cap.
 */
export interface ExecSettings {
  /** Open sessions (interactive and one-shot) per app. SVC_EXEC_MAX_SESSIONS_PER_APP, @default 4 */
  readonly maxSessionsPerApp: number;
  /** Open sessions on the platform. SVC_EXEC_MAX_SESSIONS, @default 16 */
  readonly maxSessions: number;
  /** A session with no input or output this long is closed. SVC_EXEC_IDLE_TIMEOUT, @default 15m */
  readonly idleTimeoutMs: number;
  /** A session is closed this long after it started, active or not. SVC_EXEC_MAX_DURATION, @default 4h */
  readonly maxDurationMs: number;
  /** A created session not attached within this window is dropped. @default 30s */
  readonly attachWindowMs: number;
  /** A one-shot command is killed after this. SVC_EXEC_COMMAND_TIMEOUT, @default 60s */
  readonly commandTimeoutMs: number;
  /** A one-shot command's stdout and stderr are each cut at this many bytes. @default 1 MiB */
  readonly maxOutputBytes: number;
}

export const DEFAULT_EXEC_SETTINGS: ExecSettings = {
  maxSessionsPerApp: 4,
  maxSessions: 16,
  idleTimeoutMs: 15 * 60_000,
  maxDurationMs: 4 * 3600_000,
  attachWindowMs: 30_000,
  commandTimeoutMs: 60_000,
  maxOutputBytes: 1024 * 1024,
};
