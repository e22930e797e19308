/**
 * Child process of the kill -9 tests: takes one platform backup of the data folder in argv[2] into
 * the backups folder in argv[3] (no key: without secrets), as the control plane does.
 */
import { PlatformBackupService } from '../../controllers/backup/platform-backup-service.js';
import { buildInfo } from '../../platform/build-info.js';
import { openControlStore } from '../../store/open-stores.js';

const [dataDir, backupsDir, appsDir] = process.argv.slice(2) as [string, string, string];
const control = openControlStore(dataDir);
const service = new PlatformBackupService({
  sources: {
    controlDb: control.db,
    dataDir,
    appsDir,
    settings: () => ({}),
    secretSettings: new Set(),
    build: buildInfo(),
  },
  backupsDir,
  key: undefined,
});
const backup = await service.take({ noSecrets: true, trigger: 'test' });
process.stdout.write(`${JSON.stringify(backup)}\n`);
control.db.close();
