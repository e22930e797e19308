/**
 * Drain signals: the spec's signal names checked against the signals a process can be sent.
 */
import type { TranslationWarning } from './translation.js';

const knownSignals: ReadonlySet<string> = new Set<NodeJS.Signals>([
  'SIGABRT',
  'SIGALRM',
  'SIGBUS',
  'SIGCHLD',
  'SIGCONT',
  'SIGFPE',
  'SIGHUP',
  'SIGILL',
  'SIGINT',
  'SIGIO',
  'SIGIOT',
  'SIGKILL',
  'SIGPIPE',
  'SIGPOLL',
  'SIGPROF',
  'SIGPWR',
  'SIGQUIT',
  'SIGSEGV',
  'SIGSTKFLT',
  'SIGSTOP',
  'SIGSYS',
  'SIGTERM',
  'SIGTRAP',
  'SIGTSTP',
  'SIGTTIN',
  'SIGTTOU',
  'SIGUNUSED',
  'SIGURG',
  'SIGUSR1',
  'SIGUSR2',
  'SIGVTALRM',
  'SIGWINCH',
  'SIGXCPU',
  'SIGXFSZ',
  'SIGBREAK',
  'SIGLOST',
  'SIGINFO',
]);

function isSignal(name: string): name is NodeJS.Signals {
  return knownSignals.has(name);
}

/** The drain signal of a process; an unknown name (the schema only checks the SIG prefix) becomes SIGTERM with a warning. */
export function drainSignal(name: string, path: string, warnings: TranslationWarning[]): NodeJS.Signals {
  if (isSignal(name)) return name;
  warnings.push({
    path,
    message: `${JSON.stringify(name)} is not a signal name known to the scheduler; SIGTERM is sent instead`,
  });
  return 'SIGTERM';
}
