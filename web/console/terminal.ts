/**
 * The app page's terminal: an exec session (ADR 0168) shown with xterm.js (loaded on first use). "Open a terminal"
 * creates a session in a running allocation of the app and attaches to it over a WebSocket (the
 * token, when signed in, travels in the `svc.bearer.` subprotocol, never in the URL, ADR 0131); keys
 * go to the remote shell, the terminal follows its box's size, "Close" ends the session.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import '@xterm/xterm/css/xterm.css';
import './terminal.css';
import { api, ApiError } from '../shared/api.js';
import { html } from '../shared/html.js';
import { sessionToken } from '../shared/session.js';

function base64url(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

type State = { kind: 'closed' } | { kind: 'opening' } | { kind: 'open' } | { kind: 'ended'; text: string };

/** The terminal section of an app page. */
export function AppTerminal(props: { app: string }) {
  const box = useRef<HTMLDivElement>(null);
  const socket = useRef<WebSocket | undefined>(undefined);
  const [state, setState] = useState<State>({ kind: 'closed' });
  const [error, setError] = useState<string | undefined>(undefined);

  useEffect(() => () => socket.current?.close(), []);

  const open = async () => {
    setError(undefined);
    setState({ kind: 'opening' });
    const { openTerminal } = await import('./terminal-view.js');
    const { term, fit } = openTerminal(box.current!);
    let created: { session: { id: string }; links: { attach: string } };
    try {
      created = await api('/api/v1/exec-sessions', {
        method: 'POST',
        body: { app: props.app, cols: term.cols, rows: term.rows },
      });
    } catch (e) {
      term.dispose();
      setError(e instanceof ApiError ? `${e.message} (${e.code})` : String(e));
      setState({ kind: 'closed' });
      return;
    }
    const token = sessionToken();
    const protocols = ['svc.exec', ...(token === undefined ? [] : [`svc.bearer.${base64url(token)}`])];
    const ws = new WebSocket(
      `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${created.links.attach}`,
      protocols,
    );
    socket.current = ws;
    const resize = new ResizeObserver(() => fit.fit());
    resize.observe(box.current!);
    term.onData((data) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'stdin', data }));
    });
    term.onResize(({ cols, rows }) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'resize', cols, rows }));
    });
    let ended = 'Session closed.';
    ws.onopen = () => {
      setState({ kind: 'open' });
      // The box was hidden when the terminal was made: fit it now it shows, and tell the PTY.
      fit.fit();
      ws.send(JSON.stringify({ type: 'resize', cols: term.cols, rows: term.rows }));
      term.focus();
    };
    ws.onmessage = (message) => {
      const frame = JSON.parse(String(message.data)) as {
        type: string;
        data?: string;
        exitCode?: number;
        reason?: string;
        message?: string;
      };
      if (frame.type === 'stdout') term.write(frame.data ?? '');
      else if (frame.type === 'exit')
        ended = `Session ended: exit ${frame.exitCode ?? '?'} (${frame.reason ?? 'exited'}).`;
      else if (frame.type === 'error') ended = `Session failed: ${frame.message ?? 'unknown error'}`;
    };
    ws.onclose = () => {
      resize.disconnect();
      term.options.disableStdin = true;
      if (socket.current === ws) socket.current = undefined;
      setState({ kind: 'ended', text: ended });
    };
  };

  const running = state.kind === 'open' || state.kind === 'opening';
  return html`
    <div class="actions">
      ${
        running
          ? html`<button type="button" onClick=${() => socket.current?.close()}>Close the terminal</button>`
          : html`<button type="button" onClick=${() => void open()}>Open a terminal</button>`
      }
      <span class="muted" role="status">${
        state.kind === 'opening'
          ? 'Connecting…'
          : state.kind === 'open'
            ? "Connected: a shell as the app's user in a running allocation."
            : state.kind === 'ended'
              ? state.text
              : ''
      }</span>
    </div>
    ${error === undefined ? null : html`<p class="error" role="alert">${error}</p>`}
    <div class="terminal" ref=${box} aria-label="Terminal of ${props.app}" hidden=${state.kind === 'closed'}></div>`;
}
