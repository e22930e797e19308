/**
 * Listener hand-off (ADR 0159): the listening sockets of the API (8800: the API and the wake
 * gateway; the knowledge store's two ports) outlive an API restart by the host agent.
 *
 * The API that binds them gives them to the agent it launches, the agent gives them to each API it
 * starts, and an agent that hands over to a newer release gives them to its successor. Each hop
 * is a child process started with an IPC channel: the parent sends every socket as a raw handle
 * (`child.send(message, handle)`, passed by the kernel with `SCM_RIGHTS`, so the child's copy is
 * close-on-exec and no app process inherits it), the child takes them before it starts and closes
 * the channel. The agent holds its copies without accepting on them, so while no API runs the
 * kernel keeps completing connections into the listen backlog, and the next API accepts them.
 */
import type { ChildProcess } from 'node:child_process';
import type net from 'node:net';

/** The listening sockets an API serves, by name. */
export const LISTENER_NAMES = ['control', 'knowledge', 'knowledge-admin'] as const;
/** One of {@link LISTENER_NAMES}. */
export type ListenerName = (typeof LISTENER_NAMES)[number];

/**
 * A listening socket's handle as the runtime passes it between processes (libuv's TCP handle);
 * `server.listen(handle)` serves it. Opaque on purpose: only this module and `listen` touch it.
 */
export type ListenerHandle = object;

/** The environment variable naming the listeners a parent sends over the IPC channel. */
export const LISTENERS_ENV = 'SVC_HANDED_LISTENERS';
/**
 * Set (to `1`) for an API started *prepared*: it loads its code, says so over the IPC channel and
 * waits for the word to start, so the old API serves while the new one loads.
 */
export const PREPARED_START_ENV = 'SVC_PREPARED_START';

const MESSAGE = 'svc:listener';
const READY = 'svc:listeners-ready';
const PREPARED = 'svc:prepared';
const START = 'svc:start';
/** How long a child waits for the listeners once it asked (its parent answers at once, or is gone). */
const RECEIVE_TIMEOUT_MS = 10_000;
/**
 * How long a parent about to exit (an agent handing over) waits for its child to ask for the
 * listeners and take them. The child asks only once it has loaded the code that does (a cold start
 * of `svc agent`: seconds, and more than 10 s on a loaded 2-core host); the bound only keeps a child
 * that never asks (a release without the hand-off) from holding its parent forever.
 */
const TAKE_TIMEOUT_MS = 120_000;

/** The listeners this process holds: served (an API) or only kept (the host agent). */
const held = new Map<ListenerName, ListenerHandle>();
/** Hand-offs under way: a child has not yet taken the listeners sent to it. */
const pending = new Set<Promise<void>>();

/** Records a listener this process serves, so an agent it launches receives it. */
export function holdListener(name: ListenerName, server: net.Server): void {
  // The runtime's own handle of a listening server: what `child.send` passes as a socket of its own.
  const handle = (server as unknown as { _handle?: ListenerHandle | null })._handle;
  if (handle) held.set(name, handle);
}

/** The listener of that name this process received or serves, if any. */
export function heldListener(name: ListenerName): ListenerHandle | undefined {
  return held.get(name);
}

/**
 * Closes this process's copies of the held listeners (the host agent, once no API runs outside a
 * restart): the port is free for an API started by hand, instead of bound by an agent that only
 * keeps it.
 */
export function releaseListeners(): ListenerName[] {
  const names = [...held.keys()];
  for (const handle of held.values()) (handle as { close?: () => void }).close?.();
  held.clear();
  return names;
}

/** Names of the listeners held now. */
export function heldListenerNames(): ListenerName[] {
  return [...held.keys()];
}

/**
 * Environment and stdio for a child that receives the held listeners: `ipc` as the fourth stdio
 * entry, and {@link LISTENERS_ENV} naming them (nothing when none are held).
 */
export function handOffSpawnOptions(): { env: Record<string, string>; ipc: boolean } {
  const names = heldListenerNames();
  return names.length === 0 ? { env: {}, ipc: false } : { env: { [LISTENERS_ENV]: names.join(',') }, ipc: true };
}

/**
 * Sends every held listener to `child` (spawned with {@link handOffSpawnOptions}); the child
 * closes the channel once it has them. Never throws: a child that does not take them binds its
 * own ports (and a restart has its gap again).
 */
export function sendListeners(child: ChildProcess): void {
  if (!child.connected) return;
  child.on('error', () => undefined);
  // Until the child has them (it closes the channel) or is gone: a parent about to exit waits for
  // it with `handOffsSettled` (an agent handing over to its successor).
  const settled = new Promise<void>((resolve) => {
    // Ref'd: a parent with nothing else to do (an agent that handed over) lives until the child
    // has asked for the sockets and taken them; its channel alone (unref'd) would not keep it.
    const timer = setTimeout(resolve, TAKE_TIMEOUT_MS);
    const done = (): void => {
      clearTimeout(timer);
      resolve();
    };
    child.once('disconnect', done);
    child.once('exit', done);
  });
  pending.add(settled);
  void settled.then(() => pending.delete(settled));
  // Sent when the child asks: a message that arrives before the child listens for it is dropped,
  // and the handle with it.
  const onMessage = (message: unknown): void => {
    if ((message as { type?: string } | null)?.type !== READY) return;
    child.off('message', onMessage);
    for (const [name, handle] of held)
      child.send({ type: MESSAGE, name }, handle as net.Server, (error) => {
        if (error) child.emit('handoff-error', error);
      });
  };
  child.on('message', onMessage);
  // The parent never waits on the channel: a child that never asks is not kept waiting for.
  child.channel?.unref();
}

/** Resolves once every child sent listeners has taken them (or is gone, or {@link TAKE_TIMEOUT_MS} passed). */
export async function handOffsSettled(): Promise<void> {
  await Promise.all([...pending]);
}

/**
 * Takes the listeners a parent sends (those {@link LISTENERS_ENV} names), holds them, and closes
 * the channel; resolves with what arrived (a subset on a timeout). Without the variable or a
 * channel, resolves at once with nothing.
 */
export async function receiveListeners(env: NodeJS.ProcessEnv = process.env): Promise<ListenerName[]> {
  const expected = (env[LISTENERS_ENV] ?? '')
    .split(',')
    .filter((name): name is ListenerName => (LISTENER_NAMES as readonly string[]).includes(name));
  // Not passed on to this process's own children (apps, candidates): they get no listener.
  delete env[LISTENERS_ENV];
  const keepChannel = env[PREPARED_START_ENV] === '1';
  // A prepared API whose agent is gone already, or goes while this process loads, exits at once.
  if (keepChannel) exitWhenOrphaned();
  if (expected.length === 0 || !process.send || !process.connected) {
    if (process.connected && !keepChannel) process.disconnect();
    return [];
  }
  const received: ListenerName[] = [];
  await new Promise<void>((resolve) => {
    const timer = setTimeout(done, RECEIVE_TIMEOUT_MS);
    function onMessage(message: unknown, handle: unknown): void {
      const m = message as { type?: string; name?: string } | null;
      if (m?.type !== MESSAGE || handle === undefined || handle === null) return;
      const name = m.name as ListenerName;
      if (!expected.includes(name)) return;
      held.set(name, handle);
      received.push(name);
      if (expected.every((n) => held.has(n))) done();
    }
    function done(): void {
      clearTimeout(timer);
      process.off('message', onMessage);
      process.off('disconnect', done);
      resolve();
    }
    process.on('message', onMessage);
    process.once('disconnect', done);
    process.send!({ type: READY });
  });
  if (process.connected && !keepChannel) process.disconnect();
  return received;
}

/** The listener that ends a prepared API whose parent went away; set while it waits to be told start. */
let orphanWatch: (() => void) | undefined;

/**
 * Makes a prepared API exit as soon as its parent (the host agent) is gone before saying start: at
 * once when the channel is closed already, otherwise on its `disconnect`, whatever this process is
 * doing meanwhile (loading its code). Such a process holds the listening sockets it was handed; if
 * it lived on, it would start by itself once loaded (the channel closed, nobody to wait for), race
 * the agent that takes over for the ports and the databases, and keep the ports bound meanwhile.
 */
function exitWhenOrphaned(): void {
  if (orphanWatch !== undefined) return;
  orphanWatch = () => {
    console.error('the host agent that prepared this API went away before saying start: exiting');
    process.exit(0);
  };
  if (!process.send || !process.connected) orphanWatch();
  process.once('disconnect', orphanWatch);
}

/**
 * For an API started prepared ({@link PREPARED_START_ENV}): says it has loaded its code and waits
 * until its parent says start, then closes the channel. Resolves at once otherwise. A parent that
 * goes away first (an agent killed mid-restart), even before this is called, never said start:
 * this process exits, and the agent that takes over starts the API itself; starting here would
 * race it for the ports and the databases (the backup of ADR 0089 may be under way).
 */
export async function preparedStart(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const prepared = env[PREPARED_START_ENV] === '1';
  delete env[PREPARED_START_ENV];
  if (!prepared) return;
  exitWhenOrphaned();
  await new Promise<void>((resolve) => {
    const onMessage = (message: unknown): void => {
      if ((message as { type?: string } | null)?.type !== START) return;
      process.off('message', onMessage);
      if (orphanWatch !== undefined) process.off('disconnect', orphanWatch);
      resolve();
    };
    process.on('message', onMessage);
    process.send!({ type: PREPARED });
  });
  if (process.connected) process.disconnect();
}

/**
 * Resolves true once a child started with {@link PREPARED_START_ENV} has loaded its code, false
 * when it exits or closes its channel first, or after `timeoutMs`.
 */
export function whenPrepared(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (!child.connected) return resolve(false);
    const timer = setTimeout(() => finish(false), timeoutMs);
    const onMessage = (message: unknown): void => {
      if ((message as { type?: string } | null)?.type === PREPARED) finish(true);
    };
    const onGone = (): void => finish(false);
    function finish(ok: boolean): void {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onGone);
      child.off('disconnect', onGone);
      resolve(ok);
    }
    child.on('message', onMessage);
    child.once('exit', onGone);
    child.once('disconnect', onGone);
  });
}

/** Tells a prepared child to start; false when it can no longer be told (gone, channel closed). */
export function startPrepared(child: ChildProcess): boolean {
  if (!child.connected) return false;
  try {
    child.send({ type: START });
    return true;
  } catch {
    return false;
  }
}
