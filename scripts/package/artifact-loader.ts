/**
 * The main script of the release artifact's single executable (ADR 0170): it picks one of the two
 * bundled programs the executable carries as assets and runs it with its V8 code cache.
 *
 * - `client`: the program with only the client commands (`svc validate`, `svc apps`, `svc version`,
 *   …), about a twelfth of the whole; picked when the command line names one of them.
 * - `program`: the whole program, for every other command line (`svc serve`, `svc doctor`, `svc`,
 *   `svc --help`, an unknown command).
 *
 * Node compiles the single executable's main script whole at every start, so a short command paid
 * for the twelve megabytes of the server it never runs. Each asset is a CommonJS function
 * expression (`(function (exports, require, module, __filename, __dirname) {…})`) and gets what the
 * single executable gives its main script: the same `require` (built-in modules only), the same
 * module and file name.
 *
 * Bundled by scripts/package/package-artifact.ts, which defines the constants below.
 */
import { getRawAsset } from 'node:sea';
import { Script } from 'node:vm';
import { commandName } from '../../cli/command-name.js';

/** The top-level commands the client program registers (computed by the packager). */
declare const SVC_CLIENT_COMMANDS: readonly string[];
/** Whether each program has a code cache asset (`<program>.cache`). */
declare const SVC_CODE_CACHE: boolean;

const name = commandName(process.argv.slice(2));
const program = name !== undefined && SVC_CLIENT_COMMANDS.includes(name) ? 'client' : 'program';
// The packager checks that the programs are ASCII, so Latin-1 reads them exactly, as one-byte strings.
const source = Buffer.from(getRawAsset(`${program}.js`) as ArrayBuffer).toString('latin1');
const cachedData = SVC_CODE_CACHE ? Buffer.from(getRawAsset(`${program}.cache`) as ArrayBuffer) : undefined;
const run = new Script(source, { filename: 'svc.cjs', cachedData }).runInThisContext() as (
  ...args: readonly unknown[]
) => void;
run(exports, require, module, __filename, __dirname);
