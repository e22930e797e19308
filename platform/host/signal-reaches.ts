/**
 * Whether a process exists, by signal 0: the one check that pid files, lock files and the process
 * table share.
 */

/**
 * True when signal 0 reaches `target` (a pid, or a process group when negative). A process of
 * another user answers EPERM: it exists. A zombie (dead, not yet reaped) is still reached.
 */
export function signalReaches(target: number): boolean {
  try {
    process.kill(target, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
