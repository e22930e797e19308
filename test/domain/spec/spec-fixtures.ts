/**
 * Spec fixtures on disk and the expectations in their headers, shared by the fixture-driven tests.
 *
 * An invalid fixture's header lists the findings it must produce, one per line:
 * `# expect: <rule> <path> <line>:<column> [warning]` (path `(document)` for the document itself), and
 * `# fleet: <path>` names a fleet document (relative to the fixture) to validate against, and
 * `# driver: <local|kubernetes|swarm>` the scheduler driver the fixture is written for (local by default).
 */
import { isSchedulerDriver, SchedulerDriver } from '../../../domain/spec/index.js';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../helpers/repo.js';

/** The package root. */
export const root = REPO_ROOT;

/** One finding a fixture header expects. */
export interface ExpectedFinding {
  readonly rule: string;
  readonly path: string;
  readonly line: number;
  readonly column: number;
  readonly severity: 'error' | 'warning';
}

/** A fixture file with its text and header. */
export interface SpecFixture {
  /** Path relative to the package root. */
  readonly name: string;
  readonly file: string;
  readonly text: string;
  readonly expected: readonly ExpectedFinding[];
  /** Text of the fleet document named by `# fleet:`, if any. */
  readonly fleetText?: string;
  /** The driver named by `# driver:`, local by default. */
  readonly driver: SchedulerDriver;
}

function parseExpectation(line: string, file: string): ExpectedFinding {
  const match = /^# expect: (\S+) (\S+) (\d+):(\d+)(?: (warning|error))?$/.exec(line);
  if (match === null) throw new Error(`${file}: malformed expectation ${JSON.stringify(line)}`);
  return {
    rule: match[1]!,
    path: match[2] === '(document)' ? '' : match[2]!,
    line: Number(match[3]),
    column: Number(match[4]),
    severity: match[5] === 'warning' ? 'warning' : 'error',
  };
}

/** Reads one fixture file. */
export function readFixture(file: string): SpecFixture {
  const text = fs.readFileSync(file, 'utf8');
  const lines = text.split('\n');
  const expected = lines.filter((line) => line.startsWith('# expect:')).map((line) => parseExpectation(line, file));
  const fleet = lines
    .find((line) => line.startsWith('# fleet: '))
    ?.slice('# fleet: '.length)
    .trim();
  const driver = lines
    .find((line) => line.startsWith('# driver: '))
    ?.slice('# driver: '.length)
    .trim();
  if (driver !== undefined && !isSchedulerDriver(driver)) throw new Error(`${file}: unknown driver ${driver}`);
  const fixture: SpecFixture = {
    name: path.relative(root, file),
    file,
    text,
    expected,
    driver: driver ?? SchedulerDriver.local,
  };
  return fleet === undefined
    ? fixture
    : { ...fixture, fleetText: fs.readFileSync(path.resolve(path.dirname(file), fleet), 'utf8') };
}

/** Every `.yaml` fixture in a folder (relative to the package root), sorted. */
export function fixturesIn(folder: string): SpecFixture[] {
  const dir = path.join(root, folder);
  return fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.yaml'))
    .sort()
    .map((name) => readFixture(path.join(dir, name)));
}

/** The names of the sample apps under fixtures/apps. */
export const sampleApps = ['hello-web', 'ledger-api', 'report-worker', 'thumbnailer'] as const;
