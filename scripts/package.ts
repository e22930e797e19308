/**
 * `npm run package`: builds the release artifact into dist/ (scripts/package/package-artifact.ts,
 * docs/adr/0140). `--out DIR` puts it elsewhere; `--keep-folder` also leaves the unpacked folder.
 */
import path from 'node:path';
import { packageArtifact } from './package/package-artifact.js';

const args = process.argv.slice(2);
const out = args.indexOf('--out');
const built = await packageArtifact({
  ...(out >= 0 && args[out + 1] ? { outDir: path.resolve(args[out + 1]!) } : {}),
  keepFolder: args.includes('--keep-folder'),
  log: (line) => process.stderr.write(`${line}\n`),
});
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
process.stdout.write(
  `${built.archive} (${mb(built.archiveBytes)}; svc executable ${mb(built.executableBytes)}, bundle ${mb(built.bundleBytes)}${built.web ? ', web console included' : ', no dist/web to include'})\n` +
    `${built.sha256File} ${built.sha256}\n`,
);
