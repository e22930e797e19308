/**
 * Operator actions from the catalogue (`GET /api/operator/actions`): a button per action that asks
 * for the confirmation the catalogue names (its prompt, placeholders filled) in a modal dialog,
 * sends nothing until confirmed, then shows the operation it queued or the error.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, fillPath } from '../shared/api.js';
import { html } from '../shared/html.js';

/** One action descriptor, as the catalogue gives it. */
export interface ActionDescriptor {
  readonly id: string;
  readonly title: string;
  readonly method: 'POST' | 'PUT';
  readonly path: string;
  readonly risk: 'low' | 'medium' | 'high';
  readonly headers: readonly { readonly name: string; readonly required: boolean }[];
  readonly confirmation: { readonly required: boolean; readonly prompt: string | null };
}

let catalogue: Promise<readonly ActionDescriptor[]> | undefined;

/** The catalogue, loaded once per page load. */
export function loadCatalogue(): Promise<readonly ActionDescriptor[]> {
  catalogue ??= api<{ actions: ActionDescriptor[] }>('/api/operator/actions')
    .then((r) => r.actions)
    .catch((error: unknown) => {
      catalogue = undefined;
      throw error;
    });
  return catalogue;
}

function useAction(id: string): ActionDescriptor | undefined {
  const [action, setAction] = useState<ActionDescriptor | undefined>(undefined);
  useEffect(() => {
    let live = true;
    loadCatalogue()
      .then((all) => {
        if (live) setAction(all.find((a) => a.id === id));
      })
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [id]);
  return action;
}

function randomKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** What an action answered, summarised for the operator. */
function summary(result: any): string {
  const operation = result?.operation;
  if (operation?.id)
    return `Queued operation ${operation.id} (${operation.kind ?? 'operation'}, ${operation.status ?? 'queued'})${result.deploymentId ? ` for deployment ${result.deploymentId}` : ''}.`;
  if (typeof result?.action === 'string' && typeof result?.matched === 'number')
    return `Done: ${result.action} matched ${result.matched} event(s), ${result.changed?.length ?? 0} changed.`;
  if (result?.status) return `Done: ${result.status}.`;
  return 'Done.';
}

export interface ActionButtonProps {
  readonly action: string;
  /** Path placeholders and prompt placeholders (`{id}`, `{hostname}`). */
  readonly params: Record<string, string>;
  readonly body?: Record<string, unknown>;
  readonly label?: string;
  readonly onDone?: (result: any) => void;
  /**
   * Where the outcome is shown when the button may leave the page once the action succeeds (an
   * acknowledged incident's row): the caller renders it; without it the button shows it beside itself.
   */
  readonly onOutcome?: (outcome: ActionOutcome) => void;
}

/** What an action ended with, as the operator reads it. */
export interface ActionOutcome {
  readonly ok: boolean;
  readonly text: string;
}

/** A button that runs one catalogue action, with its confirmation. */
export function ActionButton(props: ActionButtonProps) {
  const action = useAction(props.action);
  const dialog = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  const [ownOutcome, setOwnOutcome] = useState<ActionOutcome | undefined>(undefined);
  const outcome = props.onOutcome === undefined ? ownOutcome : undefined;
  const setOutcome = (value: ActionOutcome | undefined) => {
    setOwnOutcome(value);
    if (value !== undefined) props.onOutcome?.(value);
  };
  if (action === undefined) return null;
  const promptText =
    action.confirmation.prompt === null
      ? null
      : action.confirmation.prompt.replace(/\{(\w+)\}/g, (_, name: string) => props.params[name] ?? '');
  const run = async () => {
    dialog.current?.close();
    setBusy(true);
    setOutcome(undefined);
    try {
      const headers: Record<string, string> = {};
      if (action.headers.some((h) => h.name === 'Idempotency-Key')) headers['Idempotency-Key'] = randomKey();
      const result = await api(fillPath(action.path, props.params), {
        method: action.method,
        body: props.body ?? {},
        headers,
      });
      setOutcome({ ok: true, text: summary(result) });
      props.onDone?.(result);
    } catch (error) {
      setOutcome({ ok: false, text: `${action.title} failed: ${(error as Error).message}` });
    } finally {
      setBusy(false);
    }
  };
  const click = () => {
    if (action.confirmation.required) dialog.current?.showModal();
    else void run();
  };
  const danger = action.risk === 'high';
  return html`
    <span class="action">
      <button type="button" class=${danger ? 'danger' : ''} disabled=${busy} onClick=${click} data-action=${action.id}
        title=${`${action.title} (risk ${action.risk})`}>${props.label ?? action.title}</button>
      ${outcome ? html`<span role="status" class=${outcome.ok ? 'notice' : 'error'}>${outcome.text}</span>` : null}
      ${
        action.confirmation.required
          ? html`
        <dialog ref=${dialog} aria-labelledby=${`confirm-${action.id}`}>
          <h2 id=${`confirm-${action.id}`}>${action.title}</h2>
          <p>${promptText}</p>
          <p class="muted">Risk: ${action.risk}.</p>
          <div class="actions">
            <button type="button" class="danger" onClick=${() => void run()}>Confirm</button>
            <button type="button" onClick=${() => dialog.current?.close()}>Cancel</button>
          </div>
        </dialog>`
          : null
      }
    </span>`;
}
