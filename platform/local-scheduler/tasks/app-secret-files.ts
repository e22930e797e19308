/**
 * An app's secret files (`<dataDir>/secrets/<app>/<KEY>`, written by the deploy from committed
 * age-encrypted files or by an operator) copied into a task's `secrets/` folder before it starts:
 * the task reads `$SVC_SECRETS_DIR/<KEY>`. Regular files only; links are never followed.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** Mode of a copied secret file: owner read-only. */
export const APP_SECRET_FILE_MODE = 0o400;

/** Copies the regular files of `source` (absent: nothing) into `target`, owned by `owner` when given. */
export function copyAppSecretFiles(
  source: string,
  target: string,
  owner: { readonly uid: number; readonly gid: number } | undefined,
): void {
  let names: string[];
  try {
    names = fs.readdirSync(source);
  } catch {
    return;
  }
  const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;
  for (const name of names) {
    if (name.startsWith('.')) continue;
    let input: number;
    try {
      input = fs.openSync(path.join(source, name), O_RDONLY | O_NOFOLLOW);
    } catch {
      continue;
    }
    try {
      if (!fs.fstatSync(input).isFile()) continue;
      const value = fs.readFileSync(input);
      const temp = path.join(target, `.${name}.${randomUUID()}`);
      const out = fs.openSync(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
      try {
        fs.writeFileSync(out, value);
        if (owner) fs.fchownSync(out, owner.uid, owner.gid);
        fs.fchmodSync(out, APP_SECRET_FILE_MODE);
      } finally {
        fs.closeSync(out);
      }
      fs.renameSync(temp, path.join(target, name));
    } finally {
      fs.closeSync(input);
    }
  }
}
