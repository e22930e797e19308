/**
 * Renders an OpenAPI document as a Markdown reference page: per tag, each route with its summary,
 * caller, parameters, request body fields, answer and error answers.
 */

interface Schema {
  readonly $ref?: string;
  readonly type?: string | readonly string[];
  readonly description?: string;
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly required?: readonly string[];
  readonly enum?: readonly unknown[];
  readonly items?: Schema;
  readonly anyOf?: readonly Schema[];
  readonly oneOf?: readonly Schema[];
  readonly const?: unknown;
}

interface Operation {
  readonly summary: string;
  readonly description?: string;
  readonly tags: readonly string[];
  readonly 'x-svc-auth': string;
  readonly parameters?: readonly {
    readonly name: string;
    readonly in: string;
    readonly required: boolean;
    readonly description?: string;
  }[];
  readonly requestBody?: { readonly required: boolean; readonly content: Readonly<Record<string, { schema: Schema }>> };
  readonly responses: Readonly<
    Record<
      string,
      {
        readonly $ref?: string;
        readonly description?: string;
        readonly content?: Readonly<Record<string, { schema: Schema }>>;
      }
    >
  >;
}

interface Document {
  readonly info: { readonly title: string; readonly description: string };
  readonly servers: readonly { readonly url: string; readonly description: string }[];
  readonly tags: readonly { readonly name: string; readonly description: string }[];
  readonly paths: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  readonly components: {
    readonly schemas: Readonly<Record<string, Schema>>;
    readonly responses: Readonly<Record<string, { readonly description: string }>>;
  };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n+/g, ' ');
}

function refName(ref: string): string {
  return decodeURIComponent(ref.slice(ref.lastIndexOf('/') + 1));
}

function resolve(document: Document, schema: Schema): Schema {
  return schema.$ref === undefined ? schema : (document.components.schemas[refName(schema.$ref)] ?? schema);
}

function typeOf(schema: Schema): string {
  if (schema.$ref !== undefined) return `\`${refName(schema.$ref)}\``;
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives !== undefined) return alternatives.map(typeOf).join(' \\| ');
  if (schema.const !== undefined) return `\`${JSON.stringify(schema.const)}\``;
  if (schema.enum !== undefined) return schema.enum.map((v) => `\`${JSON.stringify(v)}\``).join(' \\| ');
  if (schema.type === 'array' && schema.items !== undefined) return `${typeOf(schema.items)}[]`;
  if (Array.isArray(schema.type)) return schema.type.join(' \\| ');
  return typeof schema.type === 'string' ? schema.type : 'any';
}

function fields(document: Document, schema: Schema): string[] {
  const resolved = resolve(document, schema);
  const properties = Object.entries(resolved.properties ?? {});
  if (properties.length === 0) return [resolved.description ?? `A ${typeOf(resolved)}.`];
  return [
    '| field | type | required | description |',
    '|---|---|---|---|',
    ...properties.map(
      ([name, property]) =>
        `| \`${name}\` | ${typeOf(property)} | ${resolved.required?.includes(name) ? 'yes' : 'no'} | ${cell(property.description ?? '')} |`,
    ),
  ];
}

function operationSection(document: Document, method: string, path: string, op: Operation): string[] {
  const lines = [`### \`${method.toUpperCase()} ${path}\``, '', op.summary + '.', ''];
  if (op.description !== undefined) lines.push(op.description, '');
  lines.push(`Caller: ${op['x-svc-auth']}.`, '');
  const parameters = op.parameters ?? [];
  if (parameters.length > 0) {
    lines.push('| parameter | in | required | description |', '|---|---|---|---|');
    for (const p of parameters)
      lines.push(`| \`${p.name}\` | ${p.in} | ${p.required ? 'yes' : 'no'} | ${cell(p.description ?? '')} |`);
    lines.push('');
  }
  if (op.requestBody !== undefined) {
    const [contentType, { schema }] = Object.entries(op.requestBody.content)[0]!;
    const name = schema.$ref === undefined ? '' : ` \`${refName(schema.$ref)}\``;
    lines.push(`Request body${name} (${contentType}, ${op.requestBody.required ? 'required' : 'optional'}):`, '');
    lines.push(...fields(document, schema), '');
  }
  const errors: string[] = [];
  for (const [status, response] of Object.entries(op.responses)) {
    if (response.$ref !== undefined) {
      const described = document.components.responses[refName(response.$ref)]?.description ?? '';
      errors.push(`- ${status}: ${described}`);
      continue;
    }
    const content = Object.entries(response.content ?? {})[0];
    const schema = content?.[1].schema;
    const media = content ? ` (${content[0]})` : '';
    if (schema?.$ref !== undefined) {
      lines.push(`Answer ${status}${media}: \`${refName(schema.$ref)}\`.`, '', ...fields(document, schema), '');
    } else {
      const shape = schema?.type === undefined ? '' : ` ${typeOf(schema)}.`;
      lines.push(`Answer ${status}${media}:${shape} ${response.description ?? ''}`.trimEnd(), '');
    }
  }
  lines.push('Errors (`{ "error": { "code", "message", "details" } }`):', '', ...errors, '');
  return lines;
}

/** The Markdown page of `document`. */
export function referencePage(document: Document, generatedBy: string): string {
  const lines = [
    `# ${document.info.title}`,
    '',
    `<!-- Generated by ${generatedBy} from the OpenAPI document; do not edit by hand. -->`,
    '',
    document.info.description,
    '',
    `Servers: ${document.servers.map((s) => `${s.url} (${s.description})`).join(', ')}.`,
    '',
  ];
  for (const tag of document.tags) {
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      METHODS.filter((m) => item[m] !== undefined)
        .map((m) => [m, path, item[m] as Operation] as const)
        .filter(([, , op]) => op.tags.includes(tag.name)),
    );
    if (operations.length === 0) continue;
    lines.push(`## ${tag.name}`, '', tag.description, '');
    for (const [method, path, op] of operations) lines.push(...operationSection(document, method, path, op));
  }
  return (
    lines
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trimEnd() + '\n'
  );
}
