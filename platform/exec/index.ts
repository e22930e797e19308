/**
 * Exec into running allocations on the local driver (ADR 0168).
 */
export { execArgv, LocalExec, readExecTarget } from './local-exec.js';
