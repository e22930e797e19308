/**
 * Generates `docs/reference/infraspec.md`, the reference of every `infraspec.yaml` field, from
 * `schemas/infraspec.schema.json` (`node --import tsx scripts/generate-infraspec-reference.ts`). The schema
 * is the source of truth; never edit the page by hand. `--check` writes nothing and exits 1 when the
 * committed page differs from what the schema generates (`npm test` runs it).
 *
 * Each field's row gives its path, type, default and description, and what each scheduler driver does
 * with it. That column is not written by hand: for every field the generator builds a probe spec that
 * sets only that field and runs the spec validator's driver rules (`checkDriverRules`, the rules behind
 * `driver.*` warnings) for each driver; a field a rule warns about, or whose ancestor it warns about, is
 * marked with that rule on that driver, and every other field is honoured.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { checkDriverRules, SchedulerDriver } from '../domain/spec/index.js';
import { checkoutRoot } from './checkout-root.js';

const root = checkoutRoot(import.meta.dirname);

/** Where the reference page is written, relative to the package root. */
export const infraspecReferencePath = path.join(root, 'docs', 'reference', 'infraspec.md');

/** The schema the page is generated from. */
export const infraspecSchemaPath = path.join(root, 'schemas', 'infraspec.schema.json');

/** The part of JSON Schema (draft-07) the infraspec schema uses. */
export interface SchemaNode {
  readonly $ref?: string;
  readonly title?: string;
  readonly description?: string;
  readonly type?: string | readonly string[];
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly additionalProperties?: boolean | SchemaNode;
  readonly items?: SchemaNode;
  readonly allOf?: readonly SchemaNode[];
  readonly anyOf?: readonly SchemaNode[];
  readonly oneOf?: readonly SchemaNode[];
  readonly enum?: readonly unknown[];
  readonly const?: unknown;
  readonly default?: unknown;
  readonly required?: readonly string[];
  readonly minimum?: number;
  readonly definitions?: Readonly<Record<string, SchemaNode>>;
  readonly then?: SchemaNode;
  readonly else?: SchemaNode;
}

/** One step of a field's path: a named property, any key of a map, or any item of a list. */
type Step = { readonly kind: 'property'; readonly name: string } | { readonly kind: 'key' } | { readonly kind: 'item' };

/** One row of the reference: a field and what the schema and the driver rules say of it. */
export interface FieldRow {
  /** The field's path as the page prints it: `processes.<name>.health.path`, `endpoints[].url`. */
  readonly path: string;
  readonly steps: readonly Step[];
  readonly type: string;
  readonly required: boolean;
  readonly default: string;
  readonly description: string;
  /** What each driver does with the field: `yes`, or the warning rule it raises. */
  readonly drivers: Readonly<Record<SchedulerDriver, string>>;
}

/** The drivers, in the page's column order. */
const drivers = [SchedulerDriver.local, SchedulerDriver.kubernetes, SchedulerDriver.swarm] as const;

/** The name a map key takes in a printed path. */
function keyName(parentName: string): string {
  if (parentName === 'processes') return '<process>';
  if (parentName === 'regions') return '<region>';
  if (parentName === 'profiles') return '<profile>';
  if (parentName === 'env' || parentName === 'environment') return '<NAME>';
  return '<key>';
}

/** Follows `$ref` and single-`$ref` `allOf` wrappers to the schema they name; the outer description wins. */
function resolve(node: SchemaNode, definitions: Readonly<Record<string, SchemaNode>>): SchemaNode {
  let current = node;
  let description = node.description;
  let defaultValue = node.default;
  for (let depth = 0; depth < 16; depth++) {
    const ref = current.$ref ?? (current.allOf?.length === 1 ? current.allOf[0]?.$ref : undefined);
    if (ref === undefined) break;
    const name = ref.replace(/^#\/definitions\//, '');
    const target = definitions[name];
    if (target === undefined) throw new Error(`schemas/infraspec.schema.json: unknown reference ${ref}`);
    const { $ref: _ref, allOf: _allOf, ...outer } = current;
    current = { ...target, ...outer };
    description ??= target.description;
    defaultValue ??= target.default;
  }
  return { ...current, description, default: defaultValue };
}

/** The title of the definition a node refers to, if any (`GoDuration`, `EnvironmentMap`). */
function refTitle(node: SchemaNode, definitions: Readonly<Record<string, SchemaNode>>): string | undefined {
  const ref = node.$ref ?? (node.allOf?.length === 1 ? node.allOf[0]?.$ref : undefined);
  if (ref === undefined) return undefined;
  return definitions[ref.replace(/^#\/definitions\//, '')]?.title;
}

function typeOf(node: SchemaNode, definitions: Readonly<Record<string, SchemaNode>>): string {
  const resolved = resolve(node, definitions);
  if (resolved.const !== undefined) return `\`${JSON.stringify(resolved.const)}\``;
  if (resolved.enum !== undefined) return resolved.enum.map((value) => `\`${JSON.stringify(value)}\``).join(' or ');
  const title = refTitle(node, definitions);
  if (title === 'GoDuration') return 'string (Go duration)';
  const type = Array.isArray(resolved.type) ? resolved.type.join(' or ') : (resolved.type as string | undefined);
  if (type === 'array' && resolved.items !== undefined) return `list of ${typeOf(resolved.items, definitions)}`;
  if (type === 'object' && resolved.properties === undefined && typeof resolved.additionalProperties === 'object')
    return `map of ${typeOf(resolved.additionalProperties, definitions)}`;
  if (type === undefined && (resolved.anyOf ?? resolved.oneOf) !== undefined)
    return (resolved.anyOf ?? resolved.oneOf ?? []).map((branch) => typeOf(branch, definitions)).join(' or ');
  return type ?? 'any';
}

/** Collapses a description onto one table cell. */
function cell(text: string): string {
  return text.replace(/\s+/g, ' ').replace(/\|/g, '\\|').trim();
}

function printedPath(steps: readonly Step[]): string {
  let out = '';
  let lastName = '';
  for (const step of steps) {
    if (step.kind === 'item') out += '[]';
    else {
      const name = step.kind === 'property' ? step.name : keyName(lastName);
      out += out === '' ? name : `.${name}`;
      if (step.kind === 'property') lastName = step.name;
    }
  }
  return out;
}

/** A value of `node`'s type that the driver rules look at: not the default, so a rule that skips defaults still fires. */
function sampleValue(node: SchemaNode, definitions: Readonly<Record<string, SchemaNode>>): unknown {
  const resolved = resolve(node, definitions);
  if (resolved.const !== undefined) return resolved.const;
  if (resolved.enum !== undefined) return resolved.enum.find((value) => value !== resolved.default) ?? resolved.enum[0];
  const type = Array.isArray(resolved.type) ? resolved.type[0] : resolved.type;
  switch (type) {
    case 'string':
      return 'probe';
    case 'integer':
    case 'number':
      return typeof resolved.default === 'number' ? resolved.default + 1 : (resolved.minimum ?? 0) + 1;
    case 'boolean':
      return resolved.default !== true;
    case 'array':
      return resolved.items === undefined ? [] : [sampleValue(resolved.items, definitions)];
    default:
      return {};
  }
}

/** A spec that sets only the field at `steps` (to `leaf`), with every map key and list item it passes through. */
function probeSpec(steps: readonly Step[], leaf: unknown): unknown {
  let value = leaf;
  for (let index = steps.length - 1; index >= 0; index--) {
    const step = steps[index]!;
    if (step.kind === 'property') value = { [step.name]: value };
    else if (step.kind === 'key') value = { probe: value };
    else value = [value];
  }
  return value;
}

/** The probe's path segments of `steps`, as the rules report them (`probe` for a key, 0 for an item). */
function probePath(steps: readonly Step[]): (string | number)[] {
  return steps.map((step) => (step.kind === 'property' ? step.name : step.kind === 'key' ? 'probe' : 0));
}

/** What each driver does with the field at `steps`, by running the driver rules on a probe spec that sets it. */
function driverSupport(steps: readonly Step[], leaf: unknown): Record<SchedulerDriver, string> {
  const spec = probeSpec(steps, leaf);
  const at = probePath(steps);
  const out = {} as Record<SchedulerDriver, string>;
  for (const driver of drivers) {
    const rules = checkDriverRules(spec, driver)
      .filter((finding) => finding.path.length <= at.length && finding.path.every((segment, i) => segment === at[i]))
      .map((finding) => finding.rule);
    out[driver] = rules.length === 0 ? 'yes' : [...new Set(rules)].map((rule) => `warning \`${rule}\``).join(', ');
  }
  return out;
}

/** Every field under `node` (an object schema), depth first in the schema's order. */
function collectFields(
  node: SchemaNode,
  steps: readonly Step[],
  definitions: Readonly<Record<string, SchemaNode>>,
  rows: FieldRow[],
  seen: ReadonlySet<string>,
): void {
  const resolved = resolve(node, definitions);
  const required = new Set(resolved.required ?? []);
  for (const [name, child] of Object.entries(resolved.properties ?? {})) {
    const childSteps: Step[] = [...steps, { kind: 'property', name }];
    addField(child, childSteps, required.has(name), definitions, rows, seen);
  }
}

function addField(
  node: SchemaNode,
  steps: readonly Step[],
  required: boolean,
  definitions: Readonly<Record<string, SchemaNode>>,
  rows: FieldRow[],
  seen: ReadonlySet<string>,
): void {
  const resolved = resolve(node, definitions);
  rows.push({
    path: printedPath(steps),
    steps,
    type: typeOf(node, definitions),
    required,
    default: resolved.default === undefined ? '' : `\`${JSON.stringify(resolved.default)}\``,
    description: cell(resolved.description ?? ''),
    drivers: driverSupport(steps, sampleValue(node, definitions)),
  });
  // A definition met again below itself would recurse for ever; none does, but the walk stops if one ever does.
  const ref = refTitle(node, definitions);
  if (ref !== undefined && seen.has(ref)) return;
  const below = ref === undefined ? seen : new Set([...seen, ref]);
  const type = Array.isArray(resolved.type) ? resolved.type[0] : resolved.type;
  if (resolved.properties !== undefined) collectFields(resolved, steps, definitions, rows, below);
  else if (type === 'array' && resolved.items !== undefined) {
    const item = resolve(resolved.items, definitions);
    if (item.properties !== undefined) collectFields(item, [...steps, { kind: 'item' }], definitions, rows, below);
  } else if (typeof resolved.additionalProperties === 'object') {
    const value = resolve(resolved.additionalProperties, definitions);
    if (value.properties !== undefined) collectFields(value, [...steps, { kind: 'key' }], definitions, rows, below);
  }
}

/** The rows of the app spec and of the legacy function form, from the schema text. */
export function infraspecFields(schema: SchemaNode): { app: FieldRow[]; legacy: FieldRow[] } {
  const definitions = schema.definitions ?? {};
  if (schema.then === undefined || schema.else === undefined)
    throw new Error('schemas/infraspec.schema.json: the root must choose between then and else');
  const app: FieldRow[] = [];
  collectFields(schema.else, [], definitions, app, new Set());
  const legacy: FieldRow[] = [];
  collectFields(schema.then, [], definitions, legacy, new Set());
  return { app, legacy };
}

function table(rows: readonly FieldRow[]): string {
  const lines = [
    '| field | type | default | description | local | kubernetes | swarm |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const row of rows) {
    const name = `\`${row.path}\`${row.required ? ' (required)' : ''}`;
    lines.push(
      `| ${name} | ${row.type} | ${row.default} | ${row.description} | ${row.drivers.local} | ${row.drivers.kubernetes} | ${row.drivers.swarm} |`,
    );
  }
  return lines.join('\n');
}

/** Renders the whole page from the schema's text (does not write it). */
export function renderInfraspecReference(schemaText: string): string {
  const schema = JSON.parse(schemaText) as SchemaNode;
  const { app, legacy } = infraspecFields(schema);
  return `<!-- GENERATED FILE - DO NOT EDIT. Generated from schemas/infraspec.schema.json by scripts/generate-infraspec-reference.ts; run \`node --import tsx scripts/generate-infraspec-reference.ts\` after changing the schema (npm test fails while this page is stale). -->

# infraspec.yaml reference

Every field of an app's \`infraspec.yaml\`, from [\`schemas/infraspec.schema.json\`](../../schemas/infraspec.schema.json).
To write a spec step by step, read [Writing an infraspec.yaml](../infraspec.md).

- **field**: the field's path. \`<process>\`, \`<region>\`, \`<profile>\` and \`<NAME>\` stand for any key of a map; \`[]\` for any item of a list.
- **default**: the value the schema declares when the field is left out (empty: none, or computed; the description says).
- **local**, **kubernetes**, **swarm**: what each scheduler driver (\`SVC_SCHEDULER_DRIVER\`) does with the field.
  \`yes\`: the driver honours it. \`warning \\\`rule\\\`\`: validation for that driver warns that the field, or the
  field that holds it, is not applied there. These columns come from the validator's driver rules
  (\`domain/spec/rules/driver-rules.ts\`), run on a spec that sets the field. What a driver refuses when a
  deploy submits its jobs (native releases off the local driver, for one),
  and the fields that warn \`field.inert\` on every driver, are described in [drivers.md](../drivers.md).

## App spec

A document without a \`role\` key.

${table(app)}

## Legacy function form

A document with \`role: function\`: one on-demand HTTP function.

${table(legacy)}
`;
}

/** Renders the page from the committed schema. */
export async function generateInfraspecReference(): Promise<string> {
  return renderInfraspecReference(await fs.readFile(infraspecSchemaPath, 'utf8'));
}

/**
 * Writes the page, or with `check` compares it with the committed one and returns false when they
 * differ (or the page is missing).
 */
export async function runInfraspecReference(options: {
  readonly check: boolean;
  readonly page?: string;
}): Promise<boolean> {
  const page = options.page ?? infraspecReferencePath;
  const fresh = await generateInfraspecReference();
  if (!options.check) {
    await fs.mkdir(path.dirname(page), { recursive: true });
    await fs.writeFile(page, fresh);
    return true;
  }
  const committed = await fs.readFile(page, 'utf8').catch(() => undefined);
  return committed === fresh;
}

const invokedPath = process.argv[1];
if (invokedPath !== undefined && import.meta.url === pathToFileURL(path.resolve(invokedPath)).href) {
  const check = process.argv.includes('--check');
  const pageArg = process.argv.indexOf('--page');
  const page = pageArg === -1 ? undefined : path.resolve(process.argv[pageArg + 1] ?? '');
  const ok = await runInfraspecReference({ check, page });
  const shown = path.relative(process.cwd(), page ?? infraspecReferencePath);
  if (check && !ok) {
    process.stderr.write(
      `${shown} is stale: run node --import tsx scripts/generate-infraspec-reference.ts and commit the result\n`,
    );
    process.exitCode = 1;
  } else process.stdout.write(check ? `${shown} is up to date\n` : `wrote ${shown}\n`);
}
