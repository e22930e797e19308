/**
 * Probes of a control plane API over HTTP: `/api/health` answers 200 and `/api/version` names
 * the expected release.
 */

/** What a probe saw. */
export interface ApiProbe {
  readonly healthy: boolean;
  readonly release: string | null;
  readonly label: string | null;
  readonly detail: string;
}

/** One probe of the API at `url`. */
export async function probeApi(url: string, options: { token?: string; timeoutMs?: number } = {}): Promise<ApiProbe> {
  const headers: Record<string, string> = options.token ? { authorization: `Bearer ${options.token}` } : {};
  const timeout = options.timeoutMs ?? 2000;
  try {
    const health = await fetch(`${url}/api/health`, { headers, signal: AbortSignal.timeout(timeout) });
    await health.body?.cancel();
    const version = await fetch(`${url}/api/version`, { headers, signal: AbortSignal.timeout(timeout) });
    const body = (await version.json()) as { release?: string | null; label?: string };
    return {
      healthy: health.status === 200,
      release: body.release ?? null,
      label: body.label ?? null,
      detail: `health ${health.status}, version ${version.status}`,
    };
  } catch (error) {
    return { healthy: false, release: null, label: null, detail: (error as Error).message };
  }
}

/**
 * Probes until the API is healthy and reports `release` (when given), `alive()` turns false, or
 * `timeoutMs` passes; resolves with the last probe and whether it passed.
 */
export async function waitForApi(
  url: () => string | undefined,
  options: {
    release?: string;
    token?: string;
    timeoutMs: number;
    intervalMs?: number;
    alive?: () => boolean;
    signal?: AbortSignal;
  },
): Promise<{ ok: boolean; probe: ApiProbe | undefined; reason: string }> {
  const deadline = Date.now() + options.timeoutMs;
  let last: ApiProbe | undefined;
  for (;;) {
    options.signal?.throwIfAborted();
    const at = url();
    if (at !== undefined) {
      last = await probeApi(at, options.token === undefined ? {} : { token: options.token });
      if (last.healthy && (options.release === undefined || last.release === options.release))
        return { ok: true, probe: last, reason: `healthy at ${at}, release ${last.release ?? 'unknown'}` };
    }
    if (options.alive && !options.alive())
      return { ok: false, probe: last, reason: `the API process exited${last ? ` (last probe: ${last.detail})` : ''}` };
    if (Date.now() > deadline) {
      const seen = last
        ? last.healthy
          ? `healthy but reports release ${last.release ?? 'none'}, expected ${options.release ?? 'any'}`
          : `not healthy: ${last.detail}`
        : 'no address';
      return { ok: false, probe: last, reason: `not ready after ${options.timeoutMs} ms: ${seen}` };
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 150));
  }
}
