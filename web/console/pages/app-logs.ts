/**
 * The app page's log view: the app's captured lines (GET /api/v1/apps/{id}/logs), followed live
 * over Server-Sent Events read with fetch (so the session's bearer token travels in a header), with
 * a search box, a time range and a process filter. Changing a filter starts a new follow.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../../shared/html.js';
import { sessionToken } from '../../shared/session.js';
import type { LogLineView as LogLine } from '../../../openapi/control-plane.types.js';

/** Lines kept on the page; older ones scroll away. */
const KEEP = 1000;
const RANGES = [
  ['5m', 'last 5 minutes'],
  ['1h', 'last hour'],
  ['24h', 'last 24 hours'],
  ['7d', 'last 7 days'],
] as const;

/** Follows the app's logs with `filters`, calling `onLines` per batch, until the returned abort. */
function followLogs(
  app: string,
  filters: Record<string, string>,
  onLines: (lines: LogLine[]) => void,
  onError: (message: string) => void,
): () => void {
  const controller = new AbortController();
  const query = new URLSearchParams({ follow: 'true', limit: '200' });
  for (const [key, value] of Object.entries(filters)) if (value !== '') query.set(key, value);
  const token = sessionToken();
  void (async () => {
    try {
      const response = await fetch(`/api/v1/apps/${encodeURIComponent(app)}/logs?${query}`, {
        headers: { Accept: 'text/event-stream', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
        credentials: 'omit',
        cache: 'no-store',
        signal: controller.signal,
      });
      if (!response.ok || response.body === null) {
        const body = (await response.json().catch(() => undefined)) as { error?: { message?: string } } | undefined;
        onError(body?.error?.message ?? `HTTP ${response.status}`);
        return;
      }
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value;
        const batch: LogLine[] = [];
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (/^event: /m.test(event)) continue;
          const data = /^data: (.*)$/m.exec(event)?.[1];
          if (data !== undefined) batch.push(JSON.parse(data) as LogLine);
        }
        if (batch.length > 0) onLines(batch);
      }
    } catch (error) {
      if (!controller.signal.aborted) onError((error as Error).message);
    }
  })();
  return () => controller.abort();
}

/** The log view of one app; `processes` fills the process filter. */
export function AppLogs(props: { app: string; processes: readonly string[] }) {
  const [grep, setGrep] = useState('');
  const [search, setSearch] = useState('');
  const [since, setSince] = useState('1h');
  const [process, setProcess] = useState('');
  const [lines, setLines] = useState<LogLine[]>([]);
  const [error, setError] = useState<string | undefined>(undefined);
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    setLines([]);
    setError(undefined);
    return followLogs(
      props.app,
      { grep: search, since, process },
      (batch) => setLines((previous) => [...previous, ...batch].slice(-KEEP)),
      setError,
    );
  }, [props.app, search, since, process]);
  useEffect(() => {
    const element = box.current;
    if (element) element.scrollTop = element.scrollHeight;
  }, [lines]);
  const onSubmit = (event: Event) => {
    event.preventDefault();
    setSearch(grep.trim());
  };
  return html`<form class="log-filters" onSubmit=${onSubmit}>
      <label>Search <input type="search" name="grep" value=${grep} placeholder="text in the line" onInput=${(e: Event) => setGrep((e.target as HTMLInputElement).value)} /></label>
      <label>Time <select name="since" value=${since} onChange=${(e: Event) => setSince((e.target as HTMLSelectElement).value)}>
        ${RANGES.map(([value, label]) => html`<option value=${value}>${label}</option>`)}
      </select></label>
      <label>Process <select name="process" value=${process} onChange=${(e: Event) => setProcess((e.target as HTMLSelectElement).value)}>
        <option value="">all</option>
        ${props.processes.map((name) => html`<option value=${name}>${name}</option>`)}
      </select></label>
      <button type="submit">Search</button>
    </form>
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    <div class="log-view" ref=${box} role="log" aria-live="polite" aria-label="${props.app} logs">
      ${
        lines.length === 0
          ? html`<p class="muted">No lines${search ? html` containing <code>${search}</code>` : null} yet; new ones appear here as the app prints them.</p>`
          : lines.map(
              (l) =>
                html`<div class=${`log-line ${l.stream}`} data-process=${l.process}><time datetime=${l.at}>${l.at.slice(11, 23)}</time> <span class="log-source">${l.process}.${l.allocation.slice(0, 8)}</span> ${l.line}</div>`,
            )
      }
    </div>`;
}
