/**
 * The checks of restricted mode's settings: each adds a problem naming its variable instead of
 * throwing, so one failed start names every missing or inconsistent setting (ADR 0150).
 */
import fs from 'node:fs';
import path from 'node:path';
import { optional, type Env } from '../config-parsers.js';

/** A lower-case SHA-256 hex digest. */
export const SHA256 = /^[0-9a-f]{64}$/;
/** An app, job, namespace or environment name. */
export const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** A git-host repository, owner/name. */
export const REPOSITORY = /^[A-Za-z0-9][A-Za-z0-9-]{0,38}\/[A-Za-z0-9._-]{1,100}$/;

/** Every problem found so far, each naming its variable. */
export class Problems {
  readonly list: { variable: string; message: string }[] = [];
  add(variable: string, message: string): void {
    this.list.push({ variable, message });
  }
}

/** A regular, owner-only file (no group or other permission bits); its content, or undefined with a problem. */
export function ownerOnlyFile(problems: Problems, variable: string, file: string | undefined): string | undefined {
  if (file === undefined) return (problems.add(variable, 'is missing'), undefined);
  if (!path.isAbsolute(file)) return (problems.add(variable, 'must be an absolute path'), undefined);
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(file);
  } catch {
    return (problems.add(variable, `${file} cannot be read`), undefined);
  }
  if (!stat.isFile()) return (problems.add(variable, `${file} is not a regular file`), undefined);
  if ((stat.mode & 0o077) !== 0)
    return (
      problems.add(variable, `${file} must be owner-only (mode 0600 or 0400), not ${(stat.mode & 0o777).toString(8)}`),
      undefined
    );
  const content = fs.readFileSync(file, 'utf8').trim();
  if (content === '') return (problems.add(variable, `${file} is empty`), undefined);
  return content;
}

/** An https origin (with `allowPath`, an https URL without trailing slash); no credentials, query or fragment. */
export function httpsOrigin(
  problems: Problems,
  variable: string,
  raw: string | undefined,
  allowPath = false,
): string | undefined {
  if (raw === undefined) return (problems.add(variable, 'is missing'), undefined);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return (problems.add(variable, `"${raw}" is not a URL`), undefined);
  }
  if (url.protocol !== 'https:') return (problems.add(variable, 'must be an https URL'), undefined);
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '')
    return (problems.add(variable, 'must carry no credentials, query or fragment'), undefined);
  if (!allowPath && url.pathname !== '/')
    return (problems.add(variable, 'must be a single origin (no path)'), undefined);
  return allowPath ? raw.replace(/\/+$/, '') : url.origin;
}

/** A set variable matching `pattern` (described by `rule`). */
export function required(
  problems: Problems,
  env: Env,
  variable: string,
  pattern?: RegExp,
  rule?: string,
): string | undefined {
  const value = optional(env[variable]);
  if (value === undefined) return (problems.add(variable, 'is missing'), undefined);
  if (pattern !== undefined && !pattern.test(value))
    return (problems.add(variable, `"${value}" must be ${rule}`), undefined);
  return value;
}
