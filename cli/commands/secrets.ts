/**
 * `svc secrets`: the secret status of the platform and its apps (GET /api/secrets/migration-plan,
 * never values), and the host's age key: `init-key`, `recipient`, `encrypt`, `rotate-key`
 * (docs/secrets.md). The key commands run on the host and read `SVC_DATA_DIR`; they load the age
 * module only when they run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { apiGet, type ApiClientOptions } from '../api-client.js';
import { CliError, ExitCode } from '../cli-error.js';
import { renderTable } from '../table.js';

interface PlanEntryView {
  key: string;
  app: string | null;
  location: string;
  declared: boolean;
  present: boolean | null;
  encrypted: boolean;
  protection: string | null;
  action: string;
  reason: string;
}

/** A secret key that can be a file name: letters, digits, `_`, `-`, `.`, not starting with a dot. */
const KEY = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$/;

function dataDir(option: string | undefined): string {
  return path.resolve(option ?? process.env.SVC_DATA_DIR ?? 'data');
}

async function age() {
  return import('../../platform/secrets/age-secrets.js');
}

function readStdin(): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    process.stdin.on('data', (chunk: Buffer) => chunks.push(chunk));
    process.stdin.once('end', () => resolve(Buffer.concat(chunks)));
    process.stdin.once('error', reject);
  });
}

/** Every committed encrypted secret under an apps folder: `<appsDir>/<app>/secrets/<KEY>.age`. */
function encryptedFilesUnder(appsDir: string): string[] {
  const out: string[] = [];
  for (const app of fs.readdirSync(appsDir, { withFileTypes: true })) {
    if (!app.isDirectory() || app.name.startsWith('.')) continue;
    const folder = path.join(appsDir, app.name, 'secrets');
    if (!fs.existsSync(folder)) continue;
    for (const name of fs.readdirSync(folder).sort())
      if (name.endsWith('.age') && fs.lstatSync(path.join(folder, name)).isFile()) out.push(path.join(folder, name));
  }
  return out;
}

/**
 * Runs a change of the host key behind an audit receipt when the data folder keeps receipts
 * (production, ADR 0187): a receipt that cannot be written stops the change.
 */
async function withHostKeyReceipt<T>(dir: string, action: string, run: () => Promise<T>): Promise<T> {
  const { hostKeyReceipts } = await import('../../wiring/control/audit.js');
  const receipts = hostKeyReceipts(dir, process.env.SVC_PROFILE);
  if (receipts === undefined) return run();
  try {
    return await receipts.guard({
      reservation: { actor: `cli:${os.userInfo().username}`, action, target: 'host-key' },
      run,
    });
  } catch (error) {
    if ((error as { code?: unknown }).code === 'audit_receipt_unavailable')
      throw new CliError((error as Error).message, ExitCode.failed);
    throw error;
  }
}

/** Registers `secrets` and its subcommands. */
export function registerSecrets(program: Command): void {
  const secrets = program
    .command('secrets')
    .description('Secret status (never values) and the host age key: status, init-key, recipient, encrypt, rotate-key');

  secrets
    .command('status [app]', { isDefault: true })
    .description('Every secret key with where it lives, whether it is declared, present and encrypted, and what to do')
    .option('--api <url>', 'control plane URL')
    .option('--json', 'print the API answer as JSON')
    .action(async (app: string | undefined, opts: ApiClientOptions & { json?: boolean }) => {
      const query = app ? `?app=${encodeURIComponent(app)}` : '';
      const plan = await apiGet<{ entries: PlanEntryView[]; summary: Record<string, number> }>(
        `/api/secrets/migration-plan${query}`,
        opts,
      );
      if (opts.json) return void process.stdout.write(JSON.stringify(plan, null, 2) + '\n');
      const yesNo = (value: boolean | null) => (value === null ? '?' : value ? 'yes' : 'no');
      process.stdout.write(
        renderTable(
          ['KEY', 'APP', 'LOCATION', 'DECLARED', 'PRESENT', 'ENCRYPTED', 'ACTION'],
          plan.entries.map((e) => [
            e.key,
            e.app ?? '-',
            e.location,
            yesNo(e.declared),
            yesNo(e.present),
            yesNo(e.encrypted),
            e.action,
          ]),
        ),
      );
    });

  secrets
    .command('init-key')
    .description(
      "Create the host's age identity (<data dir>/keys/age-identity.txt, mode 0600) and print its public key",
    )
    .option('--data-dir <dir>', 'the platform data folder (default SVC_DATA_DIR)')
    .action(async (opts: { dataDir?: string }) => {
      const { ensureHostIdentity, hostIdentityPath } = await age();
      const file = hostIdentityPath(dataDir(opts.dataDir));
      const { recipient, created } = await withHostKeyReceipt(dataDir(opts.dataDir), 'secrets.init-key', () =>
        ensureHostIdentity(file),
      );
      process.stderr.write(`${created ? 'created' : 'kept the existing'} host identity ${file}\n`);
      process.stdout.write(`${recipient}\n`);
    });

  secrets
    .command('recipient')
    .description("Print the host's age public key (the recipient to encrypt secrets to)")
    .option('--data-dir <dir>', 'the platform data folder (default SVC_DATA_DIR)')
    .action(async (opts: { dataDir?: string }) => {
      const { hostIdentityPath, readIdentities } = await age();
      const { identityToRecipient } = await import('age-encryption');
      const file = hostIdentityPath(dataDir(opts.dataDir));
      const identity = readIdentities(file)[0];
      if (!identity) throw new CliError(`no host identity at ${file}; run "svc secrets init-key"`, ExitCode.failed);
      process.stdout.write(`${await identityToRecipient(identity)}\n`);
    });

  secrets
    .command('encrypt <app-folder> <key>')
    .description(
      'Encrypt a value read from standard input to <app-folder>/secrets/<key>.age (commit that file; never the value)',
    )
    .option('--recipient <age1...>', 'encrypt to this public key (default: the host identity of --data-dir)')
    .option('--data-dir <dir>', 'the platform data folder (default SVC_DATA_DIR)')
    .option('--force', 'replace an existing encrypted file')
    .action(async (appFolder: string, key: string, opts: { recipient?: string; dataDir?: string; force?: boolean }) => {
      if (!KEY.test(key))
        throw new CliError(
          `"${key}" is not a secret key name (letters, digits, _ - . ; no leading dot)`,
          ExitCode.usage,
        );
      if (!fs.existsSync(path.join(appFolder, 'infraspec.yaml')))
        throw new CliError(`${appFolder} has no infraspec.yaml: give the app's folder`, ExitCode.usage);
      const { encryptSecret, hostIdentityPath, readIdentities } = await age();
      let recipient = opts.recipient;
      if (!recipient) {
        const { identityToRecipient } = await import('age-encryption');
        const identity = readIdentities(hostIdentityPath(dataDir(opts.dataDir)))[0];
        if (!identity)
          throw new CliError(
            'no --recipient and no host identity here; run "svc secrets recipient" on the host and pass --recipient',
            ExitCode.usage,
          );
        recipient = await identityToRecipient(identity);
      }
      const target = path.join(appFolder, 'secrets', `${key}.age`);
      if (fs.existsSync(target) && !opts.force)
        throw new CliError(`${target} exists; pass --force to replace it`, ExitCode.failed);
      const value = await readStdin();
      if (value.length === 0) throw new CliError('standard input is empty: pipe the value in', ExitCode.usage);
      let armored: string;
      try {
        armored = await encryptSecret([recipient], value);
      } catch (cause) {
        throw new CliError(`cannot encrypt to ${recipient}: ${(cause as Error).message}`, ExitCode.usage);
      }
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.writeFileSync(target, armored, { mode: 0o644 });
      process.stdout.write(`wrote ${target}; declare ${key} in secrets: and commit the file\n`);
    });

  secrets
    .command('rotate-key')
    .description(
      "Rotate the host's age key: re-encrypt every <apps dir>/<app>/secrets/*.age to a new identity (then commit them)",
    )
    .option('--data-dir <dir>', 'the platform data folder (default SVC_DATA_DIR)')
    .option('--apps-dir <dir>', 'the apps repository checkout (default SVC_APPS_DIR)')
    .option('--drop-previous', 'remove the previous identity (older commits no longer deploy)')
    .action(async (opts: { dataDir?: string; appsDir?: string; dropPrevious?: boolean }) => {
      const { hostIdentityPath, rotateHostIdentity } = await age();
      const appsDir = path.resolve(opts.appsDir ?? process.env.SVC_APPS_DIR ?? 'apps');
      if (!fs.existsSync(appsDir)) throw new CliError(`apps folder ${appsDir} does not exist`, ExitCode.usage);
      let receipt;
      try {
        receipt = await withHostKeyReceipt(dataDir(opts.dataDir), 'secrets.rotate-key', () =>
          rotateHostIdentity(hostIdentityPath(dataDir(opts.dataDir)), encryptedFilesUnder(appsDir), {
            dropPrevious: opts.dropPrevious === true,
          }),
        );
      } catch (error) {
        if (error instanceof CliError) throw error;
        throw new CliError((error as Error).message, ExitCode.failed);
      }
      process.stdout.write(
        [
          `new host public key: ${receipt.recipient}`,
          `previous public key: ${receipt.previousRecipient} (${receipt.keptPrevious ? 'kept to deploy older commits' : 'dropped'})`,
          `re-encrypted ${receipt.reencrypted.length} file(s):`,
          ...receipt.reencrypted.map((f) => `  ${f}`),
          'commit them to the apps repository, then deploy',
          '',
        ].join('\n'),
      );
    });
}
