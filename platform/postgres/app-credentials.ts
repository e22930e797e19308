/**
 * Per-app PostgreSQL credentials of the managed server: a generated password per app role, kept in a
 * libpq password file (`<credentials>/<app>.pgpass`, mode 0600, in a 0700 folder) that is both the
 * platform's record of the password and the file the app receives as `PGPASSFILE`.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** An app's role, its database and where its password file is. */
export interface AppCredential {
  readonly role: string;
  readonly database: string;
  /** Absolute path of the libpq password file (`PGPASSFILE`). */
  readonly passwordFile: string;
  /** The password; for the platform's own use only (never logged or returned). */
  readonly password: string;
}

/** The role of an app: `app_` and the app name with `-` as `_`, within PostgreSQL's 63 characters. */
export function appRoleName(app: string): string {
  return `app_${app.replace(/[^A-Za-z0-9_]/g, '_')}`.slice(0, 63).toLowerCase();
}

/** The Unix user an app runs as, who must read its own password file. */
export type CredentialOwner = (app: string) => { readonly uid: number; readonly gid: number } | undefined;

/**
 * Password files of app roles in one folder. With `owner` (apps run as their own users), each file
 * belongs to its app's user (0600, as libpq requires) in a folder others can enter but not list
 * (0711); otherwise the folder is 0700.
 */
export class AppCredentials {
  readonly #owner: CredentialOwner | undefined;

  constructor(
    readonly folder: string,
    owner?: CredentialOwner,
  ) {
    this.#owner = owner;
  }

  /** The password file path of `app`. */
  fileOf(app: string): string {
    if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(app))
      throw new Error(`app name ${JSON.stringify(app)} cannot name a credentials file`);
    return path.join(this.folder, `${app}.pgpass`);
  }

  /**
   * The app's credential: the kept password, or a new one generated and written. The file has one
   * line, `*:*:<database>:<role>:<password>`, rewritten when the database or role changes.
   */
  ensure(app: string, database: string): AppCredential {
    const owner = this.#owner?.(app);
    fs.mkdirSync(this.folder, { recursive: true, mode: 0o700 });
    fs.chmodSync(this.folder, owner ? 0o711 : 0o700);
    const file = this.fileOf(app);
    const role = appRoleName(app);
    const kept = this.#read(file);
    const password = kept?.password ?? randomBytes(24).toString('base64url');
    if (kept?.database !== database || kept.role !== role) {
      // Written aside and renamed: a reader never sees a half-written file.
      const temp = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(temp, `*:*:${database}:${role}:${password}\n`, { mode: 0o600 });
      fs.renameSync(temp, file);
    }
    fs.chmodSync(file, 0o600);
    if (owner) fs.chownSync(file, owner.uid, owner.gid);
    return { role, database, passwordFile: file, password };
  }

  #read(file: string): { database: string; role: string; password: string } | undefined {
    try {
      const [, , database, role, password] = fs.readFileSync(file, 'utf8').split('\n')[0]!.split(':');
      return database && role && password ? { database, role, password } : undefined;
    } catch {
      return undefined;
    }
  }
}
