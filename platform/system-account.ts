/**
 * `useradd` options of the system accounts the platform creates (app users, ADR 0047; the managed
 * PostgreSQL user): no home, no login shell, a comment naming what it is for. Ids are the caller's.
 */
export function noLoginSystemAccount(comment: string): readonly string[] {
  return [
    '--system',
    '--no-create-home',
    '--home-dir',
    '/nonexistent',
    '--shell',
    '/usr/sbin/nologin',
    '--comment',
    comment,
  ];
}
