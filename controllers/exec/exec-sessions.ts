/**
 * Exec sessions (ADR 0168): interactive PTY sessions and one-shot commands in a running allocation
 * of an app, as the app's own user, in its environment, working folder and mount namespace.
 *
 * A session is created (the allocation chosen, limits checked, the step-up consumed when
 * authentication is on), then attached within `attachWindowMs`: attaching starts the PTY. Input,
 * resizes and output pass through the attachment; the session ends when its command exits, when
 * the attachment goes away, after `idleTimeoutMs` without input or output, after `maxDurationMs`,
 * or when deleted. `exec.session.started` and `exec.session.ended` record who, the app, the
 * allocation, the command, the duration and the exit code: never what was typed or printed.
 */
import { randomBytes } from 'node:crypto';
import type { EventEmitterPort } from '../../domain/events/event-port.js';
import type { ExecPort, ExecResult, PtyProcess, TerminalSize } from '../../domain/exec/exec-port.js';
import {
  ConflictError,
  ForbiddenError,
  NotFoundError,
  TooManyRequestsError,
  UnavailableError,
} from '../../domain/errors.js';
import type { LoggerPort } from '../../domain/logger.js';
import type { TaskContainer } from '../../domain/scheduler/index.js';
import type { Db } from '../../store/database.js';
import type { SchedulerTargets } from '../apps/scheduler-targets.js';
import { DEFAULT_EXEC_SETTINGS, type ExecSettings } from './exec-settings.js';
import { resolveExecAllocation } from './exec-target-resolver.js';

/** Why a session ended. */
export type EndReason = 'exited' | 'detached' | 'idle' | 'max_duration' | 'deleted' | 'not_attached' | 'closing';

/** A session as the API shows it. */
export interface ExecSessionView {
  readonly id: string;
  readonly app: string;
  readonly process: string;
  readonly allocation: string;
  readonly command: readonly string[];
  readonly mode: 'interactive' | 'command';
  readonly state: 'created' | 'running' | 'ended';
  readonly createdBy: string;
  readonly createdAt: string;
  readonly startedAt: string | null;
}

/** Where an attached session's output and end go (a WebSocket, in the API). */
export interface ExecSink {
  output(data: string): void;
  exit(exit: { exitCode: number; signal: number | null; reason: EndReason }): void;
}

/** What the attachment may do. */
export interface ExecAttachment {
  input(data: string): void;
  resize(size: TerminalSize): void;
  /** The client went away: the session ends. */
  detach(): void;
}

interface Session {
  view: ExecSessionView;
  pid: number;
  container?: TaskContainer;
  pty?: PtyProcess;
  size: TerminalSize;
  device: string;
  startedAt?: number;
  endReason?: EndReason;
  timers: NodeJS.Timeout[];
  idle?: NodeJS.Timeout;
}

/** The shell of an interactive session without a command. */
export const DEFAULT_SHELL: readonly string[] = [
  '/bin/sh',
  '-c',
  'if [ -x /bin/bash ]; then exec /bin/bash -l; else exec /bin/sh -l; fi',
];

export interface ExecServiceOptions {
  readonly db: Db;
  readonly targets: SchedulerTargets;
  readonly exec: ExecPort;
  readonly events: EventEmitterPort;
  readonly logger: LoggerPort;
  readonly settings?: Partial<ExecSettings>;
}

export class ExecSessions {
  readonly settings: ExecSettings;
  private readonly sessions = new Map<string, Session>();
  private closed = false;

  constructor(private readonly options: ExecServiceOptions) {
    this.settings = { ...DEFAULT_EXEC_SETTINGS, ...options.settings };
  }

  /** Open sessions (created or running). */
  list(): ExecSessionView[] {
    return [...this.sessions.values()].map((s) => s.view);
  }

  /** One open session; 404 when unknown or ended, 403 when it belongs to another caller. */
  get(id: string, caller: string | undefined): ExecSessionView {
    return this.owned(id, caller).view;
  }

  /** Creates an interactive session (not yet started: {@link attach} starts it). */
  async create(request: {
    readonly app: string;
    readonly process?: string;
    readonly command?: readonly string[];
    readonly size?: TerminalSize;
    readonly createdBy: string;
    /** Consumes the step-up (after the app, allocation and limits are checked, so a refusal does not burn it); returns the device. */
    readonly authorize?: () => string;
  }): Promise<ExecSessionView> {
    const allocation = await resolveExecAllocation(this.options.db, this.options.targets, request.app, request.process);
    this.checkLimits(request.app);
    const device = request.authorize?.() ?? '';
    const id = `xs_${randomBytes(16).toString('hex')}`;
    const session: Session = {
      view: {
        id,
        app: request.app,
        process: allocation.taskGroup,
        allocation: allocation.id,
        command: request.command ?? DEFAULT_SHELL,
        mode: 'interactive',
        state: 'created',
        createdBy: request.createdBy,
        createdAt: new Date().toISOString(),
        startedAt: null,
      },
      pid: allocation.task.pid!,
      ...(allocation.task.container ? { container: allocation.task.container } : {}),
      size: request.size ?? { cols: 80, rows: 24 },
      device,
      timers: [],
    };
    this.sessions.set(id, session);
    session.timers.push(
      setTimeout(() => {
        if (session.view.state === 'created') this.forget(session);
      }, this.settings.attachWindowMs),
    );
    return session.view;
  }

  /** Starts the session's PTY and connects it to `sink`. */
  attach(id: string, caller: string | undefined, sink: ExecSink): ExecAttachment {
    const session = this.owned(id, caller);
    if (session.view.state !== 'created')
      throw new ConflictError(`exec session ${id} is already attached`, { code: 'session_attached', details: { id } });
    const target = this.options.exec.target(session.pid, session.container);
    if (target === undefined) {
      this.forget(session);
      throw new ConflictError(`allocation ${session.view.allocation} of app "${session.view.app}" stopped`, {
        code: 'no_running_allocation',
        details: { app: session.view.app, allocation: session.view.allocation, state: 'stopped' },
      });
    }
    const pty = this.options.exec.spawnPty(target, session.view.command, session.size);
    session.pty = pty;
    session.startedAt = Date.now();
    session.view = { ...session.view, state: 'running', startedAt: new Date(session.startedAt).toISOString() };
    this.started(session);
    const touch = () => {
      if (session.idle) clearTimeout(session.idle);
      session.idle = setTimeout(() => this.end(session, 'idle'), this.settings.idleTimeoutMs);
    };
    touch();
    session.timers.push(setTimeout(() => this.end(session, 'max_duration'), this.settings.maxDurationMs));
    pty.onData((data) => {
      touch();
      sink.output(data);
    });
    pty.onExit(({ exitCode, signal }) => {
      const reason = session.endReason ?? 'exited';
      this.ended(session, exitCode, signal ?? null, reason);
      sink.exit({ exitCode, signal: signal ?? null, reason });
    });
    return {
      input: (data) => {
        touch();
        pty.write(data);
      },
      resize: (size) => {
        session.size = size;
        pty.resize(size);
      },
      detach: () => this.end(session, 'detached'),
    };
  }

  /** Ends a session (its owner or, with `caller` undefined, anyone). */
  delete(id: string, caller: string | undefined): void {
    const session = this.owned(id, caller);
    if (session.view.state === 'created') this.forget(session);
    else this.end(session, 'deleted');
  }

  /** Runs one command to completion in the app's running allocation (compatibility exec). */
  async run(request: {
    readonly app: string;
    readonly process?: string;
    readonly command: readonly string[];
    readonly stdin?: string;
    readonly timeoutMs?: number;
    readonly createdBy: string;
  }): Promise<ExecResult & { allocation: string; process: string; durationMs: number }> {
    const allocation = await resolveExecAllocation(this.options.db, this.options.targets, request.app, request.process);
    this.checkLimits(request.app);
    const target = this.options.exec.target(allocation.task.pid!, allocation.task.container);
    if (target === undefined)
      throw new ConflictError(`allocation ${allocation.id} of app "${request.app}" stopped`, {
        code: 'no_running_allocation',
        details: { app: request.app, allocation: allocation.id, state: 'stopped' },
      });
    const id = `xc_${randomBytes(16).toString('hex')}`;
    const session: Session = {
      view: {
        id,
        app: request.app,
        process: allocation.taskGroup,
        allocation: allocation.id,
        command: request.command,
        mode: 'command',
        state: 'running',
        createdBy: request.createdBy,
        createdAt: new Date().toISOString(),
        startedAt: new Date().toISOString(),
      },
      pid: allocation.task.pid!,
      size: { cols: 0, rows: 0 },
      device: '',
      startedAt: Date.now(),
      timers: [],
    };
    this.sessions.set(id, session);
    this.started(session);
    const result = await this.options.exec.run(target, request.command, {
      stdin: request.stdin ?? '',
      timeoutMs: Math.min(request.timeoutMs ?? this.settings.commandTimeoutMs, this.settings.commandTimeoutMs),
      maxOutputBytes: this.settings.maxOutputBytes,
    });
    const durationMs = Date.now() - session.startedAt!;
    this.ended(session, result.exitCode, null, result.timedOut ? 'max_duration' : 'exited');
    return { ...result, allocation: allocation.id, process: allocation.taskGroup, durationMs };
  }

  /** Ends every session (the plane is closing). */
  close(): void {
    this.closed = true;
    for (const session of [...this.sessions.values()]) {
      if (session.view.state === 'created') this.forget(session);
      else if (session.pty) this.end(session, 'closing');
    }
  }

  private owned(id: string, caller: string | undefined): Session {
    const session = this.sessions.get(id);
    if (session === undefined)
      throw new NotFoundError(`no open exec session ${id}`, { code: 'session_not_found', details: { id } });
    if (caller !== undefined && session.view.createdBy !== caller)
      throw new ForbiddenError(`exec session ${id} belongs to another caller`, {
        code: 'session_not_yours',
        details: { id },
      });
    return session;
  }

  private checkLimits(app: string): void {
    if (this.closed) throw new UnavailableError('the control plane is closing', { code: 'closing' });
    const open = [...this.sessions.values()];
    const retryAfterSeconds = Math.max(1, Math.ceil(this.settings.attachWindowMs / 1000));
    if (open.filter((s) => s.view.app === app).length >= this.settings.maxSessionsPerApp)
      throw new TooManyRequestsError(
        `app "${app}" has ${this.settings.maxSessionsPerApp} open exec sessions, the most allowed (SVC_EXEC_MAX_SESSIONS_PER_APP)`,
        {
          code: 'too_many_sessions',
          retryAfterSeconds,
          details: { app, limit: this.settings.maxSessionsPerApp, scope: 'app' },
        },
      );
    if (open.length >= this.settings.maxSessions)
      throw new TooManyRequestsError(
        `the platform has ${this.settings.maxSessions} open exec sessions, the most allowed (SVC_EXEC_MAX_SESSIONS)`,
        {
          code: 'too_many_sessions',
          retryAfterSeconds,
          details: { limit: this.settings.maxSessions, scope: 'platform' },
        },
      );
  }

  private end(session: Session, reason: EndReason): void {
    if (session.endReason !== undefined) return;
    session.endReason = reason;
    session.pty?.kill();
  }

  private forget(session: Session): void {
    for (const timer of session.timers) clearTimeout(timer);
    if (session.idle) clearTimeout(session.idle);
    this.sessions.delete(session.view.id);
  }

  private started(session: Session): void {
    const { view } = session;
    this.emit({
      type: 'exec.session.started',
      severity: 'info',
      app: view.app,
      title: `exec session started in ${view.app} (${view.process}) by ${view.createdBy}`,
      metadata: {
        sessionId: view.id,
        mode: view.mode,
        who: view.createdBy,
        process: view.process,
        allocationId: view.allocation,
        command: view.command,
        ...(session.device ? { device: session.device } : {}),
      },
    });
  }

  private ended(session: Session, exitCode: number, signal: number | null, reason: EndReason): void {
    this.forget(session);
    const { view } = session;
    const durationMs = Date.now() - (session.startedAt ?? Date.now());
    session.view = { ...view, state: 'ended' };
    this.emit({
      type: 'exec.session.ended',
      severity: 'info',
      app: view.app,
      title: `exec session ended in ${view.app} (${view.process}): exit ${exitCode}, ${reason}`,
      metadata: {
        sessionId: view.id,
        mode: view.mode,
        who: view.createdBy,
        process: view.process,
        allocationId: view.allocation,
        command: view.command,
        durationMs,
        exitCode,
        ...(signal === null ? {} : { signal }),
        reason,
      },
    });
  }

  private emit(input: Parameters<EventEmitterPort['emit']>[0]): void {
    this.options.events.emit(input).catch((error: unknown) => {
      this.options.logger.warn({ err: error, type: input.type }, 'exec event not recorded');
    });
  }
}
