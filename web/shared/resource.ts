/**
 * `useResource`: loads a route's JSON into a component, with reload, optional periodic refresh and
 * the error the API gave.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, type ApiError } from './api.js';

/** The state of one loaded route. */
export interface Resource<T> {
  readonly data: T | undefined;
  readonly error: ApiError | Error | undefined;
  readonly loading: boolean;
  readonly reload: () => void;
}

/** Loads `path` (skipped while it is undefined); refreshes every `refreshMs` when given. */
export function useResource<T = any>(path: string | undefined, options: { refreshMs?: number } = {}): Resource<T> {
  const [state, setState] = useState<{ data: T | undefined; error: ApiError | Error | undefined; loading: boolean }>({
    data: undefined,
    error: undefined,
    loading: path !== undefined,
  });
  const [tick, setTick] = useState(0);
  const current = useRef(path);
  current.current = path;
  const reload = useCallback(() => setTick((n) => n + 1), []);
  useEffect(() => {
    if (path === undefined) return undefined;
    const controller = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    api<T>(path, { signal: controller.signal })
      .then((data) => {
        if (current.current === path) setState({ data, error: undefined, loading: false });
      })
      .catch((error: unknown) => {
        if (controller.signal.aborted) return;
        setState((s) => ({
          data: s.data,
          error: error instanceof Error ? error : new Error(String(error)),
          loading: false,
        }));
      });
    return () => controller.abort();
  }, [path, tick]);
  useEffect(() => {
    if (options.refreshMs === undefined || path === undefined) return undefined;
    const timer = setInterval(reload, options.refreshMs);
    return () => clearInterval(timer);
  }, [options.refreshMs, path, reload]);
  return { ...state, reload };
}
