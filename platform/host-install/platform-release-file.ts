/**
 * Reading a release folder's manifest (`svc-release.json`, written by the packager).
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  parsePlatformRelease,
  RELEASE_EXECUTABLE,
  RELEASE_MANIFEST,
  type PlatformRelease,
} from '../../domain/host-install/index.js';
import { HostInstallError } from '../errors.js';

/** The release unpacked in `dir`; throws a {@link HostInstallError} when `dir` is not one. */
export function readPlatformRelease(dir: string): PlatformRelease {
  const file = path.join(dir, RELEASE_MANIFEST);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    throw new HostInstallError(`${dir} is not an unpacked release of svc: it has no ${RELEASE_MANIFEST}`, { dir });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new HostInstallError(`${file} is not JSON`, { file }, error);
  }
  const release = parsePlatformRelease(parsed);
  if (typeof release === 'string') throw new HostInstallError(`${file}: ${release}`, { file });
  if (!fs.existsSync(path.join(dir, RELEASE_EXECUTABLE)))
    throw new HostInstallError(`${dir} has no ${RELEASE_EXECUTABLE} executable`, { dir });
  return release;
}

/**
 * The release folder the running program belongs to: the executable's folder when it holds a
 * manifest (the release artifact), undefined when running from a checkout.
 */
export function runningRelease(): string | undefined {
  const dir = path.dirname(process.execPath);
  return fs.existsSync(path.join(dir, RELEASE_MANIFEST)) ? dir : undefined;
}
