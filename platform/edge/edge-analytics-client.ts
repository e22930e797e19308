/**
 * Client of the edge provider's GraphQL analytics API: hourly request counts per hostname for one
 * zone and one window. Only counts come back; no request details are asked for.
 */
import { UnavailableError } from '../../domain/errors.js';
import type { SyncWindow } from '../../domain/routing/index.js';

/** Connection settings of the analytics API. */
export interface EdgeAnalyticsOptions {
  /** Base URL; the client posts to `<apiUrl>/graphql`. */
  readonly apiUrl: string;
  /** API token, sent as `Authorization: Bearer`; never logged. */
  readonly apiToken: string;
  readonly zoneId: string;
  /** Per-request time limit. @default 15000 */
  readonly timeoutMs?: number;
}

/** One hour's count for one hostname. */
export interface HourlyCount {
  readonly hostname: string;
  /** Start of the hour, ISO 8601. */
  readonly hour: string;
  readonly count: number;
}

/** The analytics query: request counts grouped by hour and host, filtered to the given hosts. */
export const HOURLY_REQUESTS_QUERY = `query HourlyRequests($zoneTag: string!, $start: Time!, $end: Time!, $hosts: [string!]!) {
  viewer {
    zones(filter: { zoneTag: $zoneTag }) {
      httpRequestsAdaptiveGroups(
        limit: 10000
        filter: { datetime_geq: $start, datetime_lt: $end, clientRequestHTTPHost_in: $hosts }
        orderBy: [datetimeHour_ASC]
      ) {
        count
        dimensions { datetimeHour clientRequestHTTPHost }
      }
    }
  }
}`;

/** Asks for hourly counts of `hostnames` within `window`. */
export async function fetchHourlyCounts(
  options: EdgeAnalyticsOptions,
  window: SyncWindow,
  hostnames: readonly string[],
): Promise<HourlyCount[]> {
  const url = `${options.apiUrl.replace(/\/+$/, '')}/graphql`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${options.apiToken}` },
      body: JSON.stringify({
        query: HOURLY_REQUESTS_QUERY,
        variables: { zoneTag: options.zoneId, start: window.start, end: window.end, hosts: [...hostnames] },
      }),
      signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
    });
  } catch (error) {
    throw new UnavailableError(`edge analytics: request failed: ${(error as Error).message}`, {
      code: 'edge_analytics_unavailable',
    });
  }
  const text = await response.text();
  if (!response.ok)
    throw new UnavailableError(`edge analytics: HTTP ${response.status}`, {
      code: 'edge_analytics_unavailable',
      details: { status: response.status },
    });
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    throw new UnavailableError('edge analytics: the response is not JSON', { code: 'edge_analytics_unavailable' });
  }
  if (Array.isArray(body?.errors) && body.errors.length > 0) {
    throw new UnavailableError(`edge analytics: ${String(body.errors[0]?.message ?? 'query failed')}`, {
      code: 'edge_analytics_unavailable',
    });
  }
  const groups = body?.data?.viewer?.zones?.[0]?.httpRequestsAdaptiveGroups;
  if (!Array.isArray(groups)) return [];
  const out: HourlyCount[] = [];
  for (const g of groups) {
    const hostname = g?.dimensions?.clientRequestHTTPHost;
    const hour = g?.dimensions?.datetimeHour;
    const count = g?.count;
    if (
      typeof hostname !== 'string' ||
      typeof hour !== 'string' ||
      typeof count !== 'number' ||
      !Number.isFinite(count) ||
      count < 0
    )
      continue;
    const at = new Date(hour);
    if (Number.isNaN(at.getTime())) continue;
    out.push({ hostname: hostname.toLowerCase(), hour: at.toISOString(), count: Math.floor(count) });
  }
  return out;
}
