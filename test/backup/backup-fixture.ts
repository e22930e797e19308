/**
 * A data folder with control.db, knowledge.db and an apps repository, and a platform backup service
 * over it (no PostgreSQL), for the backup and restore tests.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import { PlatformBackupService } from '../../controllers/backup/platform-backup-service.js';
import type { EventInput } from '../../domain/events/index.js';
import { parseBackupKey, type BackupKey } from '../../platform/backup/backup-key.js';
import { buildInfo } from '../../platform/build-info.js';
import type { S3PlatformBackups } from '../../platform/object-storage/s3-platform-backups.js';
import { openControlStore, openKnowledgeStore, type OpenedStore } from '../../store/open-stores.js';
import { enqueueOperation } from '../../store/control/operations/operations.js';
import { tempDir } from '../helpers/temp-dir.js';

export interface BackupFixture {
  readonly root: string;
  readonly dataDir: string;
  readonly appsDir: string;
  readonly backupsDir: string;
  readonly control: OpenedStore;
  readonly service: PlatformBackupService;
  readonly events: EventInput[];
  readonly key: BackupKey | undefined;
}

/** A populated data folder and the service; `key`: an age identity, a passphrase, or none. */
export async function backupFixture(
  t: ExecutionContext,
  key?: string,
  remote?: { store: S3PlatformBackups; bucket: string },
): Promise<BackupFixture> {
  const root = tempDir(t, 'svc-bk-');
  const dataDir = path.join(root, 'data');
  const appsDir = path.join(root, 'apps');
  const backupsDir = path.join(root, 'backups');
  const control = openControlStore(dataDir);
  t.teardown(() => control.db.close());
  for (let i = 0; i < 20; i += 1) enqueueOperation(control.db, { kind: 'app.deploy', app: `app-${i % 3}` });
  const knowledge = openKnowledgeStore(dataDir);
  knowledge.db.close();
  fs.mkdirSync(path.join(appsDir, 'hello'), { recursive: true });
  fs.writeFileSync(path.join(appsDir, 'hello', 'infraspec.yaml'), 'name: hello\n');
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.test', ...args], { cwd: appsDir });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'apps');
  const events: EventInput[] = [];
  let parsed = key === undefined ? undefined : await parseBackupKey(key);
  // age's default scrypt work factor costs seconds per archive in JavaScript; readers accept lower ones.
  if (parsed?.kind === 'passphrase') parsed = { ...parsed, scryptLogN: 10 };
  const service = new PlatformBackupService({
    sources: {
      controlDb: control.db,
      dataDir,
      appsDir,
      settings: () => ({ SVC_PORT: '8800', SVC_API_TOKEN: 'the-secret-api-token' }),
      secretSettings: new Set(['SVC_API_TOKEN']),
      build: buildInfo(),
    },
    backupsDir,
    key: parsed,
    keep: 2,
    ...(remote ? { remote } : {}),
    events: {
      emit: async (input) => {
        events.push(input);
        return { recorded: true, id: String(events.length) };
      },
    },
  });
  return { root, dataDir, appsDir, backupsDir, control, service, events, key: parsed };
}
