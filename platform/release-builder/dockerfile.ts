/**
 * Dockerfile parsing: the instructions of a Dockerfile as data (line continuations, comments,
 * parser directives, JSON exec form versus shell form), for native execution on the host or for
 * recording what an image build will do.
 */
import { ValidationError } from '../../domain/errors.js';

/** One instruction; `json` holds the exec form's argv when the arguments are a JSON array. */
export interface DockerInstruction {
  /** Upper-case keyword, e.g. `RUN`. */
  readonly keyword: string;
  /** Raw argument text (continuations joined). */
  readonly args: string;
  readonly json?: readonly string[];
  /** 1-based line where the instruction starts. */
  readonly line: number;
}

/** Splits Dockerfile text into instructions. */
export function parseDockerfile(text: string): DockerInstruction[] {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  let escape = '\\';
  let directivesOpen = true;
  const out: DockerInstruction[] = [];
  let buffer = '';
  let startLine = 0;
  for (let i = 0; i < lines.length; i += 1) {
    const raw = lines[i] ?? '';
    const trimmed = raw.trim();
    if (directivesOpen) {
      const directive = /^#\s*([a-zA-Z]+)\s*=\s*(\S+)\s*$/.exec(trimmed);
      if (directive) {
        if (directive[1]?.toLowerCase() === 'escape' && (directive[2] === '`' || directive[2] === '\\'))
          escape = directive[2];
        continue;
      }
      directivesOpen = false;
    }
    if (buffer === '' && (trimmed === '' || trimmed.startsWith('#'))) continue;
    if (buffer !== '' && trimmed.startsWith('#')) continue;
    if (buffer === '') startLine = i + 1;
    const continued = trimmed.endsWith(escape) && trimmed.length > 0;
    const part = continued ? raw.replace(/\s*$/, '').slice(0, -1) : raw;
    buffer += (buffer === '' ? '' : ' ') + part.trim();
    if (continued && i < lines.length - 1) continue;
    out.push(toInstruction(buffer.trim(), startLine));
    buffer = '';
  }
  if (buffer.trim() !== '') out.push(toInstruction(buffer.trim(), startLine));
  return out;
}

function toInstruction(text: string, line: number): DockerInstruction {
  const match = /^(\S+)\s*([\s\S]*)$/.exec(text);
  if (!match?.[1]) throw new ValidationError(`Dockerfile line ${line}: cannot parse "${text}"`);
  const keyword = match[1].toUpperCase();
  const args = (match[2] ?? '').trim();
  const json = parseJsonArray(args);
  return json ? { keyword, args, json, line } : { keyword, args, line };
}

function parseJsonArray(args: string): string[] | undefined {
  if (!args.startsWith('[')) return undefined;
  try {
    const value: unknown = JSON.parse(args);
    if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value;
  } catch {
    // Not JSON: Docker treats it as shell form.
  }
  return undefined;
}

/** Parses `ENV`/`LABEL`-style pairs: `K=V K2="v 2"`, or the legacy `K value with spaces`. */
export function parseKeyValues(
  args: string,
  line: number,
  variables: Readonly<Record<string, string>>,
): Array<[string, string]> {
  if (!/^[^\s=]+=/.test(args)) {
    const legacy = /^(\S+)\s+([\s\S]*)$/.exec(args);
    if (!legacy?.[1]) throw new ValidationError(`Dockerfile line ${line}: "${args}" needs KEY=value`);
    return [[legacy[1], substitute(legacy[2] ?? '', variables)]];
  }
  const out: Array<[string, string]> = [];
  const re = /([^\s=]+)=("(?:[^"\\]|\\.)*"|'[^']*'|(?:[^\s\\]|\\.)*)/g;
  let match: RegExpExecArray | null;
  while ((match = re.exec(args)) !== null) {
    const key = match[1] ?? '';
    let value = match[2] ?? '';
    if (value.startsWith('"')) value = substitute(value.slice(1, -1).replace(/\\(.)/g, '$1'), variables);
    else if (value.startsWith("'")) value = value.slice(1, -1);
    else value = substitute(value.replace(/\\(.)/g, '$1'), variables);
    out.push([key, value]);
  }
  return out;
}

/** Expands `$VAR`, `${VAR}`, `${VAR:-default}` and `${VAR:+alt}` as Docker does in ENV, ARG and WORKDIR. */
export function substitute(text: string, variables: Readonly<Record<string, string>>): string {
  return text.replace(
    /\\\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([-+])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (whole, braced, op, word, bare) => {
      if (whole === '\\$') return '$';
      const name = (braced ?? bare) as string;
      const value = variables[name];
      if (op === '-') return value === undefined || value === '' ? (word as string) : value;
      if (op === '+') return value === undefined || value === '' ? '' : (word as string);
      return value ?? '';
    },
  );
}
