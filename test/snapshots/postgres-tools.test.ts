// tier: full
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { UnavailableError, ValidationError } from '../../domain/errors.js';
import { PostgresTools } from '../../platform/postgres/postgres-tools.js';
import { startPostgres, type PostgresCluster } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp-dir.js';

let cluster: PostgresCluster;
let tools: PostgresTools;

test.before(async () => {
  cluster = await startPostgres();
  tools = new PostgresTools({ host: cluster.host, port: cluster.port, user: cluster.user, binDir: cluster.binDir });
});
test.after.always(() => cluster?.stop());

test.serial('PostgresTools dumps a database and restores it over later changes', async (t) => {
  cluster.psql('CREATE DATABASE ledger');
  await tools.query(
    'ledger',
    'CREATE TABLE entries (id serial PRIMARY KEY, amount integer NOT NULL); INSERT INTO entries (amount) VALUES (5), (7)',
  );
  const dump = path.join(tempDir(t), 'ledger.dump');
  await tools.dump('ledger', dump);
  t.is(fs.readFileSync(dump).subarray(0, 5).toString(), 'PGDMP', 'custom format');
  await tools.query('ledger', 'DELETE FROM entries; CREATE TABLE extra (x int)');
  await tools.restore('ledger', dump);
  t.is((await tools.query('ledger', 'SELECT sum(amount) FROM entries')).trim(), '12');
});

test.serial('PostgresTools rolls a failing restore back entirely', async (t) => {
  cluster.psql('CREATE DATABASE shop');
  await tools.query('shop', "CREATE TABLE items (name text); INSERT INTO items VALUES ('kept')");
  const broken = path.join(tempDir(t), 'broken.dump');
  fs.writeFileSync(broken, 'PGDMP this is not a dump');
  await t.throwsAsync(() => tools.restore('shop', broken), {
    instanceOf: UnavailableError,
    message: /pg_restore failed/,
  });
  t.is((await tools.query('shop', 'SELECT name FROM items')).trim(), 'kept');
});

test.serial('PostgresTools applies declared migrations once and refuses an edited one', async (t) => {
  cluster.psql('CREATE DATABASE app');
  const dir = tempDir(t);
  fs.writeFileSync(path.join(dir, '001_create.sql'), 'CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL);');
  fs.writeFileSync(path.join(dir, '002_seed.sql'), "INSERT INTO notes (body) VALUES ('first');");
  t.deepEqual(await tools.applyMigrations('app', dir), {
    applied: ['001_create.sql', '002_seed.sql'],
    alreadyApplied: [],
  });
  t.deepEqual(await tools.applyMigrations('app', dir), {
    applied: [],
    alreadyApplied: ['001_create.sql', '002_seed.sql'],
  });
  t.is((await tools.query('app', 'SELECT count(*) FROM notes')).trim(), '1');
  fs.writeFileSync(path.join(dir, '003_bad.sql'), 'INSERT INTO notes (body) VALUES (NULL);');
  await t.throwsAsync(() => tools.applyMigrations('app', dir), { instanceOf: UnavailableError });
  t.is(
    (await tools.query('app', "SELECT count(*) FROM svc_schema_migrations WHERE filename = '003_bad.sql'")).trim(),
    '0',
    'a failed file is not recorded',
  );
  fs.writeFileSync(path.join(dir, '002_seed.sql'), "INSERT INTO notes (body) VALUES ('changed');");
  fs.rmSync(path.join(dir, '003_bad.sql'));
  await t.throwsAsync(() => tools.applyMigrations('app', dir), {
    instanceOf: ValidationError,
    message: /changed after it was applied/,
  });
});

test('PostgresTools refuses a database name that is not a portable identifier', async (t) => {
  await t.throwsAsync(() => tools.query('x; DROP DATABASE app', 'SELECT 1'), { instanceOf: ValidationError });
});
