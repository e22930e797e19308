/**
 * The live event stream (`WS /api/v1/events`): one socket for the console, shared by the pages.
 * The token travels in the `svc.bearer.<base64url>` subprotocol, never in the URL (docs/adr/0131).
 * Reconnects with backoff; pages subscribe to changes and reload what they show.
 */
import { useEffect, useState } from 'preact/hooks';
import { sessionToken } from '../shared/session.js';

/** One message of the stream: an event recorded or changed. */
export interface StreamChange {
  readonly kind: 'recorded' | 'updated';
  readonly event: {
    readonly id: string;
    readonly app: string | null;
    readonly type: string;
    readonly severity: string;
    readonly title: string;
    readonly state: string;
    readonly occurredAt: string;
  };
}

type Listener = (change: StreamChange) => void;
type StatusListener = (status: StreamStatus) => void;
/** Whether the console is receiving live events. */
export type StreamStatus = 'connecting' | 'live' | 'offline';

const listeners = new Set<Listener>();
const statusListeners = new Set<StatusListener>();
let socket: WebSocket | undefined;
let status: StreamStatus = 'offline';
let retryMs = 500;
let stopped = true;

function setStatus(next: StreamStatus): void {
  status = next;
  for (const listener of statusListeners) listener(next);
}

function base64url(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function connect(): void {
  if (stopped) return;
  const token = sessionToken();
  const protocols = ['svc.events', ...(token === undefined ? [] : [`svc.bearer.${base64url(token)}`])];
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api/v1/events`;
  setStatus('connecting');
  const ws = new WebSocket(url, protocols);
  socket = ws;
  ws.onmessage = (message) => {
    const data = JSON.parse(String(message.data)) as { kind: string; event?: StreamChange['event'] };
    if (data.kind === 'ready') {
      retryMs = 500;
      setStatus('live');
      return;
    }
    if (data.event !== undefined) for (const listener of listeners) listener(data as StreamChange);
  };
  ws.onclose = () => {
    if (socket !== ws) return;
    socket = undefined;
    setStatus('offline');
    if (stopped) return;
    setTimeout(connect, retryMs);
    retryMs = Math.min(retryMs * 2, 15_000);
  };
}

/** Opens the stream (once signed in). */
export function startEventStream(): void {
  if (!stopped) return;
  stopped = false;
  connect();
}

/** Closes the stream (signed out). */
export function stopEventStream(): void {
  stopped = true;
  socket?.close();
  socket = undefined;
}

/** Calls `listener` for each change (of `app` only, when given) while the component is mounted. */
export function useEventStream(listener: Listener, app?: string): void {
  useEffect(() => {
    const filtered: Listener = (change) => {
      if (app === undefined || change.event.app === app) listener(change);
    };
    listeners.add(filtered);
    return () => listeners.delete(filtered);
  }, [app, listener]);
}

/** The stream's status, for the banner. */
export function useStreamStatus(): StreamStatus {
  const [value, setValue] = useState(status);
  useEffect(() => {
    statusListeners.add(setValue);
    return () => statusListeners.delete(setValue);
  }, []);
  return value;
}
