/**
 * Spec files on disk: discovers `<appsDir>/<app>/infraspec.yaml` and `<appsDir>/deploy-groups/*.yaml`.
 *
 * Folders starting with `.` are skipped; `deploy-groups` is never an app.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Kind of a committed spec file. */
export const SpecFileKind = { app: 'app', deployGroup: 'deploy-group' } as const;
export type SpecFileKind = (typeof SpecFileKind)[keyof typeof SpecFileKind];

/** A spec file found under the apps folder. */
export interface SpecFile {
  readonly kind: SpecFileKind;
  /** App name (folder) or deploy group file name without extension. */
  readonly key: string;
  readonly file: string;
}

export const DEPLOY_GROUPS_DIR = 'deploy-groups';
export const SPEC_FILE_NAME = 'infraspec.yaml';

/** Lists the spec files under `appsDir`, sorted by kind and key; a missing folder lists nothing. */
export function discoverSpecFiles(appsDir: string): SpecFile[] {
  if (!fs.existsSync(appsDir)) return [];
  const found: SpecFile[] = [];
  for (const entry of fs.readdirSync(appsDir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    if (entry.name === DEPLOY_GROUPS_DIR) {
      for (const group of fs.readdirSync(path.join(appsDir, entry.name), { withFileTypes: true })) {
        if (group.isFile() && /\.ya?ml$/.test(group.name)) {
          found.push({
            kind: 'deploy-group',
            key: group.name.replace(/\.ya?ml$/, ''),
            file: path.join(appsDir, entry.name, group.name),
          });
        }
      }
      continue;
    }
    const file = path.join(appsDir, entry.name, SPEC_FILE_NAME);
    if (fs.existsSync(file)) found.push({ kind: 'app', key: entry.name, file });
  }
  return found.sort((a, b) => a.kind.localeCompare(b.kind) || a.key.localeCompare(b.key));
}

/** Reads a spec file as text, refusing anything larger than `maxBytes` (default 1 MiB). */
export function readSpecText(file: string, maxBytes = 1024 * 1024): string {
  const stat = fs.statSync(file);
  if (stat.size > maxBytes) throw new Error(`${file} is ${stat.size} bytes; specs are limited to ${maxBytes} bytes`);
  return fs.readFileSync(file, 'utf8');
}
