/**
 * The command a command line names: its first word that is not an option (`svc apps --json` names
 * `apps`; `svc --help` names none). The command table loads that command's module (ADR 0156), and
 * the release artifact's loader picks the bundle that holds it (ADR 0170).
 */
export function commandName(args: readonly string[]): string | undefined {
  return args.find((arg) => !arg.startsWith('-'));
}
