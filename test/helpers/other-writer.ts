/**
 * Another process writing to a SQLite database: it takes the write lock (`BEGIN IMMEDIATE`), runs one
 * statement, holds the lock for `holdMs`, then commits. control.db has writers in two processes (the
 * API and the host agent): a deferred transaction that reads, then writes after such a commit, fails
 * at once with SQLITE_BUSY ("database is locked"), busy_timeout or not.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export interface OtherWriter {
  /** Exit code of the other process once it committed and closed. */
  readonly exited: Promise<number | null>;
}

/** Starts the other writer; resolves once it holds the write lock with its statement run. */
export async function holdWriteLock(
  file: string,
  sql: string,
  args: readonly (string | number | null)[],
  holdMs = 300,
): Promise<OtherWriter> {
  const holder = spawn(
    process.execPath,
    [
      '-e',
      `const Database = require(${JSON.stringify(require.resolve('better-sqlite3'))});
       const [file, sql, args, holdMs] = process.argv.slice(1);
       const db = new Database(file);
       db.pragma('busy_timeout = 5000');
       db.exec('BEGIN IMMEDIATE');
       db.prepare(sql).run(...JSON.parse(args));
       process.stdout.write('holding\\n');
       Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(holdMs));
       db.exec('COMMIT');
       db.close();`,
      file,
      sql,
      JSON.stringify(args),
      String(holdMs),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise<number | null>((resolve) => holder.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    holder.stdout.once('data', () => resolve());
    void exited.then((code) => reject(new Error(`the other writer exited with ${code} before holding the lock`)));
  });
  return { exited };
}
