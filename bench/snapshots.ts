/**
 * bench/snapshots: snapshot and restore throughput (MB/s of database size) of the platform beside
 * plain pg_dump and pg_restore with the same options, on a ~200 MB database in a throwaway cluster.
 *
 * Run: node --import tsx bench/snapshots.ts [--mb 200] [--rounds 3]
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SnapshotService } from '../controllers/snapshots/snapshot-service.js';
import { validateInfraspec } from '../domain/spec/index.js';
import { PostgresTools } from '../platform/postgres/postgres-tools.js';
import { SnapshotFolder } from '../platform/snapshots/snapshot-folder.js';
import { openControlStore } from '../store/open-stores.js';
import { upsertAppSpec } from '../store/control/apps.js';
import { startPostgres } from '../test/helpers/postgres.js';
import { arg, median } from './lib/bench-args.js';

const targetMb = arg('mb', 200);
const rounds = arg('rounds', 3);
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-snapshots-'));
// Apps run as their own users below it (ADR 0047): they must be able to enter it.
fs.chmodSync(root, 0o711);
const cluster = await startPostgres();
try {
  cluster.psql('CREATE DATABASE bench');
  const rows = Math.round((targetMb * 1024 * 1024) / 231);
  cluster.psql(
    `CREATE TABLE blob AS SELECT g AS id, md5(g::text) || md5((g + 1)::text) || repeat('x', 120) AS payload FROM generate_series(1, ${rows}) g`,
    'bench',
  );
  const bytes = Number(cluster.psql("SELECT pg_database_size('bench')", 'bench').trim());
  const mb = bytes / 1024 / 1024;
  console.log(`database: ${mb.toFixed(0)} MB (${rows} rows)`);

  let clock = Date.now();
  const store = openControlStore(path.join(root, 'data'));
  const spec = validateInfraspec(
    'name: bench\ninfrastructure:\n  postgres:\n    database: bench\nprocesses:\n  web:\n    port: 8080\n',
  ).spec;
  upsertAppSpec(store.db, { name: 'bench', file: 'bench/infraspec.yaml', spec, findings: [], generation: 'g' });
  const service = new SnapshotService({
    db: store.db,
    folder: new SnapshotFolder(path.join(root, 'snapshots')),
    postgres: new PostgresTools({ host: cluster.host, port: cluster.port, user: cluster.user, binDir: cluster.binDir }),
    // Names carry a per-second timestamp; step the clock so back-to-back snapshots get distinct names.
    now: () => new Date((clock += 1000)),
  });
  const connection = ['-h', cluster.host, '-p', String(cluster.port), '-U', cluster.user, '-d', 'bench'];
  const plainDump = path.join(root, 'plain.dump');
  const timed = async (fn: () => unknown) => {
    const start = performance.now();
    await fn();
    return (performance.now() - start) / 1000;
  };

  const plainDumpS: number[] = [];
  const platformDumpS: number[] = [];
  const plainRestoreS: number[] = [];
  const platformRestoreS: number[] = [];
  let lastSnapshot = '';
  for (let round = 0; round < rounds; round += 1) {
    // Alternate the order so caches favour neither side.
    const plain = () =>
      execFileSync(path.join(cluster.binDir, 'pg_dump'), [
        ...connection,
        '--format=custom',
        '--no-owner',
        '--file',
        plainDump,
      ]);
    const platform = async () => {
      lastSnapshot = (await service.take('bench', 'manual')).filename;
    };
    if (round % 2 === 0) {
      plainDumpS.push(await timed(plain));
      platformDumpS.push(await timed(platform));
    } else {
      platformDumpS.push(await timed(platform));
      plainDumpS.push(await timed(plain));
    }
    const plainRestore = () =>
      execFileSync(path.join(cluster.binDir, 'pg_restore'), [
        ...connection,
        '--single-transaction',
        '--exit-on-error',
        '--clean',
        '--if-exists',
        '--no-owner',
        plainDump,
      ]);
    const platformRestore = () => service.restore('bench', lastSnapshot, { preRestore: false });
    if (round % 2 === 0) {
      plainRestoreS.push(await timed(plainRestore));
      platformRestoreS.push(await timed(platformRestore));
    } else {
      platformRestoreS.push(await timed(platformRestore));
      plainRestoreS.push(await timed(plainRestore));
    }
  }
  const line = (what: string, plain: number[], platform: number[]) => {
    const p = median(plain);
    const q = median(platform);
    console.log(
      `${what}: platform ${(mb / q).toFixed(1)} MB/s (${q.toFixed(2)} s) vs plain ${(mb / p).toFixed(1)} MB/s (${p.toFixed(2)} s): overhead ${(((q - p) / p) * 100).toFixed(1)} % (median of ${rounds})`,
    );
  };
  line('snapshot', plainDumpS, platformDumpS);
  line('restore', plainRestoreS, platformRestoreS);
  console.log(`dump size: ${(fs.statSync(plainDump).size / 1024 / 1024).toFixed(1)} MB (custom format, compressed)`);
  store.db.close();
} finally {
  cluster.stop();
  fs.rmSync(root, { recursive: true, force: true });
}
