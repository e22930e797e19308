/**
 * Per-app access keys of the S3 proxy (ADR 0188): one AWS shared-credentials file per app,
 * `<folder>/<app>.ini` (mode 0600, owned by the app's user when apps run as their own users, in a
 * folder others may enter but not list), which is both the platform's record of the key and the file
 * the app receives as `AWS_SHARED_CREDENTIALS_FILE`. The access key id names the app
 * (`SVCAPP<hex of the name>`), so the proxy finds the file without an index.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** The Unix user an app runs as, who must read its own credentials file. */
export type KeyOwner = (app: string) => { readonly uid: number; readonly gid: number } | undefined;

/** An app's proxy key. */
export interface S3ProxyKey {
  readonly app: string;
  readonly accessKeyId: string;
  /** The secret; for the proxy's own use (never logged or returned). */
  readonly secretAccessKey: string;
  readonly file: string;
}

const ID_PREFIX = 'SVCAPP';

/** The access key id of `app`. */
export function accessKeyIdOf(app: string): string {
  return `${ID_PREFIX}${Buffer.from(app, 'utf8').toString('hex').toUpperCase()}`;
}

/** The app an access key id names, or undefined when it is not one of ours. */
export function appOfAccessKeyId(accessKeyId: string): string | undefined {
  if (!accessKeyId.startsWith(ID_PREFIX)) return undefined;
  const hex = accessKeyId.slice(ID_PREFIX.length);
  if (hex.length === 0 || hex.length % 2 !== 0 || !/^[0-9A-F]+$/.test(hex)) return undefined;
  return Buffer.from(hex, 'hex').toString('utf8');
}

/** The key files of every app in one folder. */
export class S3ProxyKeys {
  readonly #owner: KeyOwner | undefined;

  constructor(
    readonly folder: string,
    owner?: KeyOwner,
  ) {
    this.#owner = owner;
  }

  /** The credentials file of `app`. */
  fileOf(app: string): string {
    if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(app))
      throw new Error(`app name ${JSON.stringify(app)} cannot name a credentials file`);
    return path.join(this.folder, `${app}.ini`);
  }

  /** The app's key: the kept one, or a new one written (atomically) when it has none. */
  ensure(app: string): S3ProxyKey {
    const owner = this.#owner?.(app);
    fs.mkdirSync(this.folder, { recursive: true, mode: 0o700 });
    fs.chmodSync(this.folder, owner ? 0o711 : 0o700);
    const file = this.fileOf(app);
    let key = this.read(app);
    if (key === undefined) {
      key = { app, accessKeyId: accessKeyIdOf(app), secretAccessKey: randomBytes(30).toString('base64url'), file };
      const temp = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(
        temp,
        `[default]\naws_access_key_id = ${key.accessKeyId}\naws_secret_access_key = ${key.secretAccessKey}\n`,
        { mode: 0o600 },
      );
      fs.renameSync(temp, file);
    }
    fs.chmodSync(file, 0o600);
    if (owner) fs.chownSync(file, owner.uid, owner.gid);
    return key;
  }

  /** The key of `app` when it has one. */
  read(app: string): S3ProxyKey | undefined {
    let text: string;
    const file = this.fileOf(app);
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      return undefined;
    }
    const id = /^aws_access_key_id\s*=\s*(\S+)\s*$/m.exec(text)?.[1];
    const secret = /^aws_secret_access_key\s*=\s*(\S+)\s*$/m.exec(text)?.[1];
    return id === accessKeyIdOf(app) && secret ? { app, accessKeyId: id, secretAccessKey: secret, file } : undefined;
  }

  /** The key an access key id belongs to, when an app holds it. */
  lookup(accessKeyId: string): S3ProxyKey | undefined {
    const app = appOfAccessKeyId(accessKeyId);
    if (app === undefined || !/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(app)) return undefined;
    return this.read(app);
  }
}
