/**
 * How a release folder is started: a built checkout by Node.js running its `bin/svc.js`, the
 * release artifact (ADR 0140) by its own `svc` executable, which carries Node.js inside.
 */
import fs from 'node:fs';
import path from 'node:path';
import { RELEASE_EXECUTABLE } from '../../domain/host-install/index.js';
import { releaseFolder } from '../build-info.js';

/**
 * The Node.js that runs a built checkout: this process's own, unless this process is the release
 * artifact's executable (which runs only its bundled program), then `node` on the PATH.
 */
function nodeBinary(): string {
  return releaseFolder() === undefined ? process.execPath : 'node';
}

/**
 * The command (program and leading arguments) that runs the release in `dir`: `bin/svc.js`
 * present → `[node, <dir>/bin/svc.js]`; else the `svc` executable → `[<dir>/svc]`. `dir` is kept
 * as given (a `current` link is followed when the command is spawned, not now).
 */
export function releaseCommand(dir: string): [string, ...string[]] {
  const script = path.join(dir, 'bin', 'svc.js');
  if (fs.existsSync(script)) return [nodeBinary(), script];
  const executable = path.join(dir, RELEASE_EXECUTABLE);
  if (isExecutableFile(executable)) return [executable];
  throw new Error(
    `${dir} holds neither bin/svc.js (a built checkout) nor an executable ${RELEASE_EXECUTABLE} (the release artifact): it cannot be started`,
  );
}

function isExecutableFile(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}
