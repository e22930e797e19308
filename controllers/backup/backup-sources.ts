/**
 * What a platform backup copies, and from where: the data folder's SQLite files (control.db through
 * the plane's own handle), the apps repository, the app databases of the PostgreSQL server, the app
 * users and the settings.
 */
import type { BuildInfo } from '../../domain/build-info.js';
import type { PostgresTools } from '../../platform/postgres/postgres-tools.js';
import type { Db } from '../../store/database.js';

/** Sources of a platform backup. */
export interface BackupSources {
  /** The control plane's control.db handle (its copy is consistent while it serves writes). */
  readonly controlDb: Db;
  /** The data folder: every `*.db` at its top level is copied online. */
  readonly dataDir: string;
  /** The apps repository (a git bundle of every ref). */
  readonly appsDir: string;
  /** The PostgreSQL server of app databases; absent: none are dumped. */
  readonly postgres?: {
    readonly tools: PostgresTools;
    /** Folder of the app roles' password files (the managed server's); absent with an external server. */
    readonly credentialsDir?: string;
  };
  /** The `SVC_*` settings in force. */
  readonly settings: () => Readonly<Record<string, string>>;
  /** Names of the settings that are secrets (left out of a backup without secrets). */
  readonly secretSettings: ReadonlySet<string>;
  readonly build: BuildInfo;
}
