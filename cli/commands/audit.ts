/**
 * `svc audit receipts|verify`: the signed audit receipts of the production profile
 * (GET /api/v1/audit/receipts, GET /api/v1/audit/verify; ADR 0187). `verify` exits 1 when any
 * receipt's hash, signature or chain link fails.
 */
import type { Command } from 'commander';
import { apiGet } from '../api-client.js';
import { CliError, ExitCode } from '../cli-error.js';
import { renderTable } from '../table.js';

interface ReceiptView {
  seq: number;
  phase: string;
  receipt_id: string;
  at: string;
  actor: string;
  action: string;
  target: string;
  before_digest: string | null;
  after_digest: string | null;
  outcome: string | null;
  refs: Record<string, string>;
}

interface Verdict {
  ok: boolean;
  receipts: number;
  open: number;
  head_sha256: string;
  problems: { seq: number; problem: string; message: string }[];
  key_id: string;
  public_key: string;
}

const short = (digest: string | null) => (digest === null ? '-' : digest.slice(0, 12));

/** Registers `audit`. */
export function registerAudit(program: Command): void {
  const audit = program
    .command('audit')
    .description('Signed audit receipts reserved before each mutation (SVC_PROFILE=production)');
  audit
    .command('receipts')
    .description('List receipts, newest first')
    .option('--target <target>', 'only receipts of one target, e.g. app:shop or tokens')
    .option('--limit <n>', 'how many', '50')
    .option('--api <url>', 'control plane URL')
    .option('--json', 'print the API answer as JSON')
    .action(async (opts: { target?: string; limit: string; api?: string; json?: boolean }) => {
      const query = new URLSearchParams({ limit: opts.limit, ...(opts.target ? { target: opts.target } : {}) });
      const answer = await apiGet<{ receipts: ReceiptView[] }>(`/api/v1/audit/receipts?${query}`, opts);
      if (opts.json) return void process.stdout.write(JSON.stringify(answer, null, 2) + '\n');
      process.stdout.write(
        renderTable(
          ['SEQ', 'AT', 'PHASE', 'ACTOR', 'ACTION', 'TARGET', 'BEFORE', 'AFTER', 'OUTCOME'],
          answer.receipts.map((r) => [
            String(r.seq),
            r.at,
            r.phase,
            r.actor,
            r.action,
            r.target,
            short(r.before_digest),
            short(r.after_digest),
            r.outcome ?? '-',
          ]),
        ),
      );
    });
  audit
    .command('verify')
    .description("Check every receipt's signature and the hash chain; exit 1 when one fails")
    .option('--api <url>', 'control plane URL')
    .option('--json', 'print the API answer as JSON')
    .action(async (opts: { api?: string; json?: boolean }) => {
      const verdict = await apiGet<Verdict>('/api/v1/audit/verify', opts);
      if (opts.json) process.stdout.write(JSON.stringify(verdict, null, 2) + '\n');
      else {
        process.stdout.write(
          `${verdict.ok ? 'ok' : 'FAILED'}: ${verdict.receipts} receipt(s), ${verdict.open} open, head ${verdict.head_sha256.slice(0, 16)}, key ${verdict.key_id}\n`,
        );
        for (const p of verdict.problems) process.stdout.write(`  #${p.seq} ${p.problem}: ${p.message}\n`);
      }
      if (!verdict.ok) throw new CliError('the audit receipts do not verify', ExitCode.failed);
    });
}
