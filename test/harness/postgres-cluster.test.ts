// tier: full
import fs from 'node:fs';
import test from 'ava';
import { startPostgres, type PostgresCluster } from '../helpers/postgres.js';

let cluster: PostgresCluster;

test.before(async () => {
  cluster = await startPostgres();
});

test.after.always(() => cluster?.stop());

test('the throwaway PostgreSQL cluster accepts connections on loopback and runs SQL', (t) => {
  t.regex(cluster.psql('SELECT version()'), /^PostgreSQL \d+/);
  cluster.psql('CREATE DATABASE ledger');
  cluster.psql(
    'CREATE TABLE entries (id serial PRIMARY KEY, amount integer NOT NULL); INSERT INTO entries (amount) VALUES (5), (7);',
    'ledger',
  );
  t.is(cluster.psql('SELECT sum(amount) FROM entries', 'ledger').trim(), '12');
  t.regex(cluster.url('ledger'), /^postgresql:\/\/\w+@127\.0\.0\.1:\d+\/ledger$/);
});

test('the throwaway cluster runs as a non-root user and lives in a temporary folder', (t) => {
  t.not(cluster.user, 'root');
  t.true(fs.existsSync(cluster.dataDir));
  t.is(cluster.psql('SHOW listen_addresses').trim(), '127.0.0.1');
});
