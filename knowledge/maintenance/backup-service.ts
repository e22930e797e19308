/**
 * Backup and restore of the knowledge store over the admin API (feature `snapshot-backup-restore`,
 * docs/adr/0174): one namespace or the whole store, copied online into a SQLite file under the
 * backups folder, listed with its SHA-256, and restored only after the file passed every check.
 * A namespace restore replaces that namespace only; a store restore replaces every namespace.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { ConflictError, NotFoundError, UnprocessableError, ValidationError } from '../../domain/errors.js';
import {
  BackupFileError,
  fileSha256,
  inspectBackup,
  writeNamespaceBackup,
  writeStoreBackup,
  BACKUP_FORMAT,
  type BackupNamespace,
  type BackupScope,
  type InspectedBackup,
} from '../../store/knowledge/backup-file.js';
import { copyNamespaceIn, purgeNamespace, vectorDimensions } from '../../store/knowledge/namespace-data.js';
import type { KnowledgeState } from '../core/knowledge-state.js';

/** A backup as the admin API lists it. */
export interface BackupRecord {
  readonly id: string;
  readonly scope: BackupScope;
  /** Tenant that took a namespace backup (null for a store backup). */
  readonly tenant: string | null;
  readonly namespace: string | null;
  readonly created_at: string;
  readonly bytes: number;
  readonly sha256: string;
  readonly format: number;
  readonly migration: number;
  /** How it came here: taken by this store or uploaded. */
  readonly origin: 'taken' | 'uploaded';
  readonly namespaces: readonly Omit<BackupNamespace, 'id' | 'created_at' | 'mode'>[];
}

/** What a restore replaced. */
export interface RestoreResult {
  readonly backup_id: string;
  readonly scope: BackupScope;
  readonly restored: readonly {
    tenant: string;
    namespace: string;
    nodes: number;
    versions: number;
    edges: number;
    vectors: number;
  }[];
  /** Namespaces a store restore removed because the backup does not have them. */
  readonly removed: readonly { tenant: string; namespace: string }[];
  readonly restored_at: string;
}

/** Options of {@link BackupService}. */
export interface BackupServiceOptions {
  /** Folder of the backup files (`<data>/knowledge-backups`). */
  readonly dir: string;
  /** The live `knowledge.db` file (namespace backups read it through a second connection). */
  readonly storeFile: string;
  /** Called after a restore changed rows underneath the services (drops derived in-memory state). */
  readonly afterRestore: () => void;
  /** Largest uploaded backup accepted. @default 64 GiB */
  readonly maxUploadBytes?: number;
}

const ID = /^kb-[0-9]{8}t[0-9]{6}z-[0-9a-f]{8}$/;

function newId(now: number): string {
  const stamp = new Date(now)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'z')
    .toLowerCase();
  return `kb-${stamp}-${randomBytes(4).toString('hex')}`;
}

/** Backup and restore of namespaces and of the whole store. */
export class BackupService {
  readonly #core: KnowledgeState;
  readonly #options: BackupServiceOptions;
  /** One backup or restore at a time: a restore must not meet a half-taken backup of the same rows. */
  #busy: string | undefined;

  constructor(core: KnowledgeState, options: BackupServiceOptions) {
    this.#core = core;
    this.#options = options;
  }

  /**
   * Removes what an interrupted backup, upload or restore left (`.partial`, `.inspect` files and
   * files without a record): a kill at any moment leaves nothing that lists. Call once at start.
   */
  sweep(): string[] {
    if (!fs.existsSync(this.#options.dir)) return [];
    const removed: string[] = [];
    const names = fs.readdirSync(this.#options.dir);
    for (const name of names) {
      const orphan = name.endsWith('.sqlite') && !names.includes(`${name.slice(0, -'.sqlite'.length)}.json`);
      if (/\.(partial|inspect)(-wal|-shm)?$/.test(name) || orphan) {
        fs.rmSync(path.join(this.#options.dir, name), { force: true });
        removed.push(name);
      }
    }
    return removed;
  }

  #file(id: string): string {
    return path.join(this.#options.dir, `${id}.sqlite`);
  }

  #meta(id: string): string {
    return path.join(this.#options.dir, `${id}.json`);
  }

  async #exclusive<T>(what: string, fn: () => Promise<T>): Promise<T> {
    if (this.#busy !== undefined)
      throw new ConflictError(`a ${this.#busy} is running; try again when it has finished`, {
        code: 'backup_busy',
        details: { running: this.#busy },
      });
    this.#busy = what;
    try {
      return await fn();
    } finally {
      this.#busy = undefined;
    }
  }

  /** Writes the record beside the file, atomically: a backup is listed only once both are complete. */
  #publishRecord(record: BackupRecord): void {
    const file = this.#meta(record.id);
    const partial = `${file}.partial`;
    const fd = fs.openSync(partial, 'w', 0o600);
    try {
      fs.writeFileSync(fd, `${JSON.stringify(record, null, 2)}\n`);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(partial, file);
    const dir = fs.openSync(this.#options.dir, 'r');
    try {
      fs.fsyncSync(dir);
    } finally {
      fs.closeSync(dir);
    }
  }

  async #record(
    id: string,
    scope: BackupScope,
    owner: { tenant: string; namespace: string } | undefined,
    origin: BackupRecord['origin'],
    inspected: InspectedBackup,
  ): Promise<BackupRecord> {
    const file = this.#file(id);
    return {
      id,
      scope,
      tenant: owner?.tenant ?? null,
      namespace: owner?.namespace ?? null,
      created_at: inspected.createdAt ?? new Date(this.#core.now()).toISOString(),
      bytes: fs.statSync(file).size,
      sha256: await fileSha256(file),
      format: BACKUP_FORMAT,
      migration: inspected.migration,
      origin,
      namespaces: inspected.namespaces.map(({ tenant, name, nodes, versions, edges, vectors }) => ({
        tenant,
        name,
        nodes,
        versions,
        edges,
        vectors,
      })),
    };
  }

  /** Checks a written file (the same checks as a restore) and reads what it holds. */
  async #inspect(file: string): Promise<InspectedBackup> {
    try {
      return await inspectBackup(file, `${file}.inspect`);
    } catch (error) {
      if (error instanceof BackupFileError)
        throw new UnprocessableError(`backup refused: ${error.message}`, { code: error.code, cause: error });
      throw error;
    }
  }

  /** Takes a backup of the tenant's namespace, or of the whole store; durable once it returns. */
  async create(tenant: string, request: { scope: BackupScope; namespace?: string | undefined }): Promise<BackupRecord> {
    const ns = request.scope === 'namespace' ? this.#core.namespace(tenant, request.namespace ?? '') : undefined;
    return this.#exclusive('backup', async () => {
      const now = this.#core.now();
      const id = newId(now);
      const file = this.#file(id);
      const marker = {
        scope: request.scope,
        createdAt: new Date(now).toISOString(),
        ...(ns ? { tenant: ns.tenant, namespace: ns.name } : {}),
      };
      try {
        if (ns) await writeNamespaceBackup(this.#options.storeFile, ns.id, file, marker);
        else await writeStoreBackup(this.#core.db, file, marker);
        // Checked as a restore would check it: a backup that would be refused is never listed.
        const inspected = await this.#inspect(file);
        fs.rmSync(inspected.workFile, { force: true });
        const record = await this.#record(
          id,
          request.scope,
          ns ? { tenant: ns.tenant, namespace: ns.name } : undefined,
          'taken',
          inspected,
        );
        this.#publishRecord(record);
        return record;
      } catch (error) {
        fs.rmSync(file, { force: true });
        throw error;
      }
    });
  }

  /**
   * Stores an uploaded backup file after the checks a restore makes (corrupt, foreign and newer
   * files are refused and nothing is kept).
   */
  async upload(tenant: string, body: Readable): Promise<BackupRecord> {
    fs.mkdirSync(this.#options.dir, { recursive: true, mode: 0o700 });
    const id = newId(this.#core.now());
    const file = this.#file(id);
    const partial = `${file}.partial`;
    const max = this.#options.maxUploadBytes ?? 64 * 1024 ** 3;
    let bytes = 0;
    try {
      await pipeline(
        body,
        async function* (source: AsyncIterable<Buffer>) {
          for await (const chunk of source) {
            bytes += chunk.length;
            if (bytes > max)
              throw new ValidationError(`the upload is larger than ${max} bytes`, { code: 'backup_too_large' });
            yield chunk;
          }
        },
        fs.createWriteStream(partial, { mode: 0o600 }),
      );
      if (bytes === 0)
        throw new ValidationError('the upload is empty: send the backup file as the body', { code: 'invalid_request' });
      const inspected = await this.#inspect(partial);
      fs.rmSync(inspected.workFile, { force: true });
      const handle = await fs.promises.open(partial, 'r');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
      fs.renameSync(partial, file);
      const only = inspected.namespaces.length === 1 ? inspected.namespaces[0] : undefined;
      // An uploaded namespace backup belongs to the uploading tenant (its namespace keeps its name).
      const owner = inspected.scope === 'namespace' && only ? { tenant, namespace: only.name } : undefined;
      const record = await this.#record(id, inspected.scope, owner, 'uploaded', inspected);
      this.#publishRecord(record);
      return record;
    } catch (error) {
      fs.rmSync(partial, { force: true });
      fs.rmSync(file, { force: true });
      throw error;
    }
  }

  /** Backups the tenant may see: its namespace backups and every store backup, newest first. */
  list(tenant: string): BackupRecord[] {
    if (!fs.existsSync(this.#options.dir)) return [];
    const records: BackupRecord[] = [];
    for (const name of fs.readdirSync(this.#options.dir)) {
      const id = name.endsWith('.json') ? name.slice(0, -5) : undefined;
      if (id === undefined || !ID.test(id)) continue;
      const record = this.#read(id);
      if (record && this.#visible(record, tenant)) records.push(record);
    }
    return records.sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id));
  }

  #visible(record: BackupRecord, tenant: string): boolean {
    return record.scope === 'store' || record.tenant === tenant;
  }

  #read(id: string): BackupRecord | undefined {
    try {
      return JSON.parse(fs.readFileSync(this.#meta(id), 'utf8')) as BackupRecord;
    } catch {
      return undefined;
    }
  }

  /** One backup, or a 404. */
  get(tenant: string, id: string): BackupRecord {
    const record = ID.test(id) ? this.#read(id) : undefined;
    if (!record || !this.#visible(record, tenant) || !fs.existsSync(this.#file(id)))
      throw new NotFoundError(`backup "${id.slice(0, 80)}" does not exist`, { code: 'backup_not_found' });
    return record;
  }

  /** The path of a backup's file, for download. */
  fileOf(tenant: string, id: string): { file: string; record: BackupRecord } {
    return { file: this.#file(id), record: this.get(tenant, id) };
  }

  /** Deletes a backup. */
  remove(tenant: string, id: string): void {
    this.get(tenant, id);
    fs.rmSync(this.#meta(id), { force: true });
    fs.rmSync(this.#file(id), { force: true });
  }

  /**
   * Restores backup `id`: scope `namespace` replaces the tenant's namespace (named in the request,
   * or the backup's only one) and nothing else; scope `store` replaces every namespace of the store
   * (a store backup only). The file is checked first (checksum, integrity, schema, version) and the
   * replacement runs in one transaction: a refused or failed restore changes nothing.
   */
  async restore(
    tenant: string,
    id: string,
    request: { scope: BackupScope; namespace?: string | undefined },
  ): Promise<RestoreResult> {
    const record = this.get(tenant, id);
    if (request.scope === 'store' && record.scope !== 'store')
      throw new ValidationError(`backup ${id} holds one namespace: restore it with scope namespace`, {
        code: 'invalid_request',
      });
    return this.#exclusive('restore', async () => {
      const file = this.#file(id);
      const sha = await fileSha256(file);
      if (sha !== record.sha256)
        throw new UnprocessableError(
          `backup ${id} changed since it was recorded (SHA-256 ${sha.slice(0, 12)}…, recorded ${record.sha256.slice(0, 12)}…): nothing was restored`,
          { code: 'backup_checksum_mismatch' },
        );
      const inspected = await this.#inspect(file);
      try {
        return this.#apply(tenant, id, record, inspected, request);
      } finally {
        fs.rmSync(inspected.workFile, { force: true });
        fs.rmSync(`${inspected.workFile}-wal`, { force: true });
        fs.rmSync(`${inspected.workFile}-shm`, { force: true });
      }
    });
  }

  #apply(
    tenant: string,
    id: string,
    record: BackupRecord,
    inspected: InspectedBackup,
    request: { scope: BackupScope; namespace?: string | undefined },
  ): RestoreResult {
    let chosen: BackupNamespace[];
    if (request.scope === 'store') {
      chosen = [...inspected.namespaces];
    } else {
      // A namespace backup restores into the tenant that owns the backup, whatever tenant it came from.
      const candidates =
        record.scope === 'namespace' ? inspected.namespaces : inspected.namespaces.filter((n) => n.tenant === tenant);
      const name = request.namespace ?? (candidates.length === 1 ? candidates[0]!.name : undefined);
      if (name === undefined)
        throw new ValidationError('namespace: is required to restore one namespace of a store backup', {
          code: 'invalid_request',
        });
      const found = candidates.find((n) => n.name === name);
      if (!found)
        throw new NotFoundError(`backup ${id} has no namespace "${name.slice(0, 128)}" of tenant ${tenant}`, {
          code: 'backup_namespace_not_found',
        });
      chosen = [{ ...found, tenant }];
    }
    const db = this.#core.db;
    const restored: RestoreResult['restored'][number][] = [];
    const removed: RestoreResult['removed'][number][] = [];
    db.prepare('ATTACH DATABASE ? AS bak').run(inspected.workFile);
    try {
      db.transaction(() => {
        for (const dims of vectorDimensions(db, 'bak')) this.#core.vectors.ensure(dims);
        if (request.scope === 'store') {
          const keep = new Set(chosen.map((n) => `${n.tenant}\u0000${n.name}`));
          for (const ns of this.#core.allNamespaces()) {
            if (keep.has(`${ns.tenant}\u0000${ns.name}`)) continue;
            purgeNamespace(db, ns.id, true);
            removed.push({ tenant: ns.tenant, namespace: ns.name });
          }
        }
        for (const n of chosen) {
          const existing = this.#core.nodes.namespace(n.tenant, n.name);
          let nsId: number;
          if (existing) {
            purgeNamespace(db, existing.id, false);
            db.prepare('UPDATE kn_namespaces SET mode = ?, created_at = ? WHERE id = ?').run(
              n.mode,
              n.created_at,
              existing.id,
            );
            nsId = existing.id;
          } else {
            nsId = this.#core.nodes.createNamespace(n.tenant, n.name, n.mode, n.created_at).id;
          }
          copyNamespaceIn(db, n.id, nsId);
          restored.push({
            tenant: n.tenant,
            namespace: n.name,
            nodes: n.nodes,
            versions: n.versions,
            edges: n.edges,
            vectors: n.vectors,
          });
        }
      })();
    } finally {
      db.exec('DETACH DATABASE bak');
      this.#options.afterRestore();
    }
    return {
      backup_id: id,
      scope: request.scope,
      restored,
      removed,
      restored_at: new Date(this.#core.now()).toISOString(),
    };
  }
}
