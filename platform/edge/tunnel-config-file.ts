/**
 * The tunnel config file on disk: read (YAML) and rendered; it is written with the atomic write of
 * platform/files/write-file-atomic.ts, so the edge daemon never reads half a file.
 */
import fs from 'node:fs';
import YAML from 'yaml';
import type { IngressRule, TunnelConfig } from '../../domain/routing/index.js';

/** What reading the file found. */
export type TunnelFileRead =
  | { readonly state: 'missing' }
  | { readonly state: 'unreadable'; readonly reason: string }
  | { readonly state: 'ok'; readonly config: TunnelConfig; readonly text: string };

/** Reads and parses the file; a file that is not a tunnel config reads as `unreadable` (it will be replaced). */
export function readTunnelConfigFile(file: string): TunnelFileRead {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'missing' };
    throw error;
  }
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (error) {
    return { state: 'unreadable', reason: `not YAML: ${(error as Error).message.split('\n')[0]}` };
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    return { state: 'unreadable', reason: 'not a mapping' };
  const record = doc as Record<string, unknown>;
  const ingress: IngressRule[] = [];
  for (const rule of Array.isArray(record.ingress) ? record.ingress : []) {
    if (typeof rule !== 'object' || rule === null) continue;
    const r = rule as Record<string, unknown>;
    if (typeof r.service !== 'string') continue;
    ingress.push(
      typeof r.hostname === 'string' ? { hostname: r.hostname, service: r.service } : { service: r.service },
    );
  }
  const config: Record<string, unknown> = {
    tunnel: typeof record.tunnel === 'string' ? record.tunnel : '',
    'credentials-file': typeof record['credentials-file'] === 'string' ? record['credentials-file'] : '',
    ingress,
  };
  // Keep unknown top-level keys visible to the plan as drift (it writes only the three known fields).
  for (const key of Object.keys(record)) if (!(key in config)) config[key] = record[key];
  return { state: 'ok', config: config as unknown as TunnelConfig, text };
}

/** The file text for `config`: YAML with the fields in the file's documented order. */
export function renderTunnelConfig(config: TunnelConfig): string {
  const doc = {
    tunnel: config.tunnel,
    'credentials-file': config['credentials-file'],
    ingress: config.ingress.map((r) =>
      r.hostname === undefined ? { service: r.service } : { hostname: r.hostname, service: r.service },
    ),
  };
  return `# Managed by svc (routing controller): hand edits are replaced on the next reconcile.\n${YAML.stringify(doc, { lineWidth: 0 })}`;
}
