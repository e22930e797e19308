/**
 * The test runner's check for processes the tests left running (ADR 0226): after the last test,
 * `scripts/test.sh` runs `node --import tsx scripts/leftover-processes.ts --ledger FILE` (`--tmp-root DIR`
 * where test folders live, default the OS's; `--only PREFIX` for test files starting with it). A process is
 * a test's when its environment carries `SVC_TEST_FILE` (every test worker sets it,
 * test/helpers/test-file-env.ts) or when its working folder or command line lies in a test folder
 * (`<tmp>/svc-*`), and still runs 5 s later (`--grace-ms`). Each is stopped (SIGTERM, then SIGKILL after 3 s, its whole process group when
 * it leads one), listed with the test file that started it (its environment, else the ledger of test
 * folders `tempDir` keeps), and the run fails: exit status 1.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readEnvironment, readProcess } from '../platform/local-scheduler/tasks/process-table.js';

/** One process a test left running. */
export interface Leftover {
  readonly pid: number;
  readonly command: string;
  /** The test file that started it, when known. */
  readonly testFile: string | undefined;
}

/** Reads the ledger of test folders: each line `<folder>\t<test file>`. */
export function readLedger(file: string | undefined): Map<string, string> {
  const folders = new Map<string, string>();
  if (file === undefined || !fs.existsSync(file)) return folders;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const [folder, testFile] = line.split('\t');
    if (folder && testFile) folders.set(folder, testFile);
  }
  return folders;
}

function link(pid: number, name: string): string | undefined {
  try {
    return fs.readlinkSync(`/proc/${pid}/${name}`).replace(/ \(deleted\)$/, '');
  } catch {
    return undefined;
  }
}

function commandLine(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
  } catch {
    return '';
  }
}

/** This process and its ancestors: the runner's own chain is never a leftover. */
function ownChain(): Set<number> {
  const chain = new Set<number>();
  for (let pid = process.pid; pid > 1 && !chain.has(pid);) {
    chain.add(pid);
    const info = readProcess(pid);
    if (info === undefined) break;
    pid = info.ppid;
  }
  return chain;
}

/** Processes the tests left running, by their environment or their test folder. */
export function findLeftovers(
  options: {
    tmpRoot?: string;
    ledger?: ReadonlyMap<string, string>;
    /** Only processes whose test file starts with this (the runner's own test). */
    only?: string;
  } = {},
): Leftover[] {
  const testFolders = path.join(options.tmpRoot ?? os.tmpdir(), 'svc-');
  const ledger = options.ledger ?? new Map<string, string>();
  const skip = ownChain();
  const found: Leftover[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (skip.has(pid)) continue;
    const info = readProcess(pid);
    if (info === undefined || info.state === 'Z') continue;
    const command = commandLine(pid);
    // Kernel threads have no command line.
    if (command === '') continue;
    const fromEnvironment = readEnvironment(pid)?.get('SVC_TEST_FILE');
    const cwd = link(pid, 'cwd') ?? '';
    const folder = [cwd, ...command.split(' ')].find((part) => part.startsWith(testFolders));
    if (fromEnvironment === undefined && folder === undefined) continue;
    let testFile = fromEnvironment;
    if (testFile === undefined) for (const [dir, file] of ledger) if (folder!.startsWith(dir)) testFile = file;
    if (options.only !== undefined && !(testFile ?? '').startsWith(options.only)) continue;
    found.push({ pid, command, testFile });
  }
  return found;
}

function alive(pid: number): boolean {
  const info = readProcess(pid);
  return info !== undefined && info.state !== 'Z';
}

/**
 * The leftovers still running after `graceMs`: a test's reaper that removes its folder once the ava
 * process is gone (test/helpers/shared-artifact.ts) ends on its own within a second of it.
 */
export async function stillRunning(leftovers: readonly Leftover[], graceMs: number): Promise<Leftover[]> {
  const deadline = Date.now() + graceMs;
  while (leftovers.some((l) => alive(l.pid)) && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
  return leftovers.filter((l) => alive(l.pid));
}

/** Stops the processes: SIGTERM, then SIGKILL after `graceMs`; a group leader's whole group. */
export async function stopLeftovers(leftovers: readonly Leftover[], graceMs = 3000): Promise<void> {
  const signal = (pid: number, name: NodeJS.Signals) => {
    for (const target of readProcess(pid)?.pgrp === pid ? [-pid, pid] : [pid])
      try {
        process.kill(target, name);
      } catch {
        // Gone already.
      }
  };
  for (const l of leftovers) signal(l.pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  const running = () => leftovers.filter((l) => alive(l.pid));
  while (running().length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  for (const l of running()) signal(l.pid, 'SIGKILL');
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const option = (name: string) => {
    const at = process.argv.indexOf(name);
    return at > 0 ? process.argv[at + 1] : undefined;
  };
  const tmpRoot = option('--tmp-root');
  const only = option('--only');
  const found = findLeftovers({
    ledger: readLedger(option('--ledger')),
    ...(tmpRoot === undefined ? {} : { tmpRoot }),
    ...(only === undefined ? {} : { only }),
  });
  const leftovers = await stillRunning(found, Number(option('--grace-ms') ?? 5000));
  if (leftovers.length === 0) {
    console.log('== processes the tests left running: none');
  } else {
    await stopLeftovers(leftovers);
    console.log(`== processes the tests left running (now stopped): ${leftovers.length}`);
    for (const l of leftovers)
      console.log(`  ${l.testFile ?? '(test file unknown)'}: pid ${l.pid} ${l.command.slice(0, 300)}`);
    process.exitCode = 1;
  }
}
