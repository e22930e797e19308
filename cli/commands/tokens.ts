/**
 * `svc tokens create|list|revoke`: scoped access tokens (POST/GET /api/access/tokens,
 * DELETE /api/access/tokens/{id}). Needs the control token in SVC_API_TOKEN.
 */
import type { Command } from 'commander';
import { apiDelete, apiGet, apiPost } from '../api-client.js';
import { renderTable } from '../table.js';

interface TokenView {
  id: string;
  name: string;
  scopes: string[];
  state: string;
  createdAt: string;
  createdBy: string;
  expiresAt: string | null;
  revokedAt: string | null;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** Registers `tokens`. */
export function registerTokens(program: Command): void {
  const tokens = program
    .command('tokens')
    .description(
      'Scoped access tokens for the event stream (events:read) and metrics scrapers (metrics:read); needs SVC_API_TOKEN',
    );
  tokens
    .command('create')
    .description('Issue a token; its secret is printed once')
    .requiredOption('--name <name>', 'what the token is for, e.g. "prometheus scraper"')
    .requiredOption('--scope <scope>', 'a scope to grant: events:read or metrics:read (repeat for more)', collect)
    .option('--expires-in <duration>', 'Go duration until it expires, e.g. 720h (at most 366 days)')
    .option('--api <url>', 'control plane URL')
    .option('--json', 'print the API answer as JSON')
    .action(async (opts: { name: string; scope: string[]; expiresIn?: string; api?: string; json?: boolean }) => {
      const answer = await apiPost<{ token: TokenView & { token: string } }>(
        '/api/access/tokens',
        { name: opts.name, scopes: opts.scope, ...(opts.expiresIn ? { expiresIn: opts.expiresIn } : {}) },
        opts,
      );
      if (opts.json) return void process.stdout.write(JSON.stringify(answer, null, 2) + '\n');
      const t = answer.token;
      process.stdout.write(`${t.token}\n`);
      process.stderr.write(
        `issued ${t.id} "${t.name}" with ${t.scopes.join(', ')}${t.expiresAt ? `, expires ${t.expiresAt}` : ', no expiry'}; the secret above is shown only once\n`,
      );
    });
  tokens
    .command('list')
    .description('List tokens (never their secrets)')
    .option('--api <url>', 'control plane URL')
    .option('--json', 'print the API answer as JSON')
    .action(async (opts: { api?: string; json?: boolean }) => {
      const answer = await apiGet<{ tokens: TokenView[] }>('/api/access/tokens', opts);
      if (opts.json) return void process.stdout.write(JSON.stringify(answer, null, 2) + '\n');
      process.stdout.write(
        renderTable(
          ['ID', 'NAME', 'SCOPES', 'STATE', 'CREATED', 'EXPIRES'],
          answer.tokens.map((t) => [t.id, t.name, t.scopes.join(','), t.state, t.createdAt, t.expiresAt ?? '-']),
        ),
      );
    });
  tokens
    .command('revoke <id>')
    .description('Revoke a token at once')
    .option('--api <url>', 'control plane URL')
    .action(async (id: string, opts: { api?: string }) => {
      const answer = await apiDelete<{ token: TokenView }>(`/api/access/tokens/${encodeURIComponent(id)}`, opts);
      process.stdout.write(`${answer.token.id} ${answer.token.state} at ${answer.token.revokedAt}\n`);
    });
}
