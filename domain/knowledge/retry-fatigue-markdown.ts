/**
 * The Markdown form of a retry-fatigue report (feature `review-handoff-retry-fatigue-markdown`): the
 * same figures as the JSON and GraphQL forms, as a document an operator pastes into a ticket or a chat.
 * Pure: it renders what the handoff service computed and reads nothing else.
 */

/** One target of a retry-fatigue report, in the REST (snake_case) form. */
export interface RetryFatigueTargetRow {
  readonly target_url: string;
  readonly candidates: number;
  readonly total_attempts: number;
  readonly ready: number;
  readonly waiting: number;
  readonly status_families: readonly { family: string; count: number }[];
  readonly owners: readonly { owner: string; count: number }[];
  readonly escalation_levels: readonly { escalation_level: string; count: number }[];
  readonly last_status_code: number | null;
  readonly last_error: string | null;
}

/** What the Markdown report says: the filter in force and the targets. */
export interface RetryFatigueMarkdownInput {
  readonly namespace: string;
  readonly preset: string | null;
  readonly owner: string | null;
  readonly escalation_level: string | null;
  readonly targets: readonly RetryFatigueTargetRow[];
  /** When the report was computed (ISO 8601). */
  readonly generatedAt: string;
}

/**
 * Text made safe inside a Markdown table cell or list item: no line breaks, and the characters that
 * would close a cell, start a link or emphasis, or run into HTML are escaped.
 */
export function markdownText(value: string): string {
  return value
    .replace(/\r\n|\r|\n/g, ' ')
    .replace(/([\\`*_{}[\]()<>#|!~])/g, '\\$1')
    .trim();
}

const cell = (v: string | number | null): string => (v === null ? '-' : markdownText(String(v)));

const counts = <T extends { count: number }>(list: readonly T[], label: (x: T) => string): string =>
  list.length === 0 ? '-' : list.map((x) => `${markdownText(label(x))} (${x.count})`).join(', ');

/** Renders a retry-fatigue report as Markdown: a heading, the filter, one table row per target, then details. */
export function retryFatigueMarkdown(input: RetryFatigueMarkdownInput): string {
  const lines: string[] = [];
  lines.push(`# Retry fatigue: namespace ${markdownText(input.namespace)}`, '');
  lines.push(
    `Preset: ${cell(input.preset)} · owner: ${cell(input.owner)} · escalation level: ${cell(input.escalation_level)} · generated ${markdownText(input.generatedAt)}`,
    '',
  );
  if (input.targets.length === 0) {
    lines.push('No target has unresolved failed handoff deliveries.', '');
    return lines.join('\n');
  }
  const total = input.targets.reduce((n, t) => n + t.candidates, 0);
  lines.push(`${input.targets.length} target(s), ${total} unresolved failed deliveries, most attempts first.`, '');
  lines.push('| Target | Candidates | Attempts | Ready | Waiting | Last status | Last error |');
  lines.push('|---|---:|---:|---:|---:|---:|---|');
  for (const t of input.targets) {
    lines.push(
      `| ${cell(t.target_url)} | ${t.candidates} | ${t.total_attempts} | ${t.ready} | ${t.waiting} | ${cell(t.last_status_code)} | ${cell(t.last_error)} |`,
    );
  }
  lines.push('');
  for (const t of input.targets) {
    lines.push(`## ${markdownText(t.target_url)}`, '');
    lines.push(`- Status families: ${counts(t.status_families, (x) => x.family)}`);
    lines.push(`- Owners: ${counts(t.owners, (x) => x.owner)}`);
    lines.push(`- Escalation levels: ${counts(t.escalation_levels, (x) => x.escalation_level)}`);
    lines.push('');
  }
  return lines.join('\n');
}
