/**
 * The schema walk of the "every field takes effect" rule (ADR 0196): the leaf fields of
 * schemas/infraspec.schema.json, and specs that set one of them to a valid value other than its default.
 */
import infraspecSchema from '../../../schemas/infraspec.schema.json' with { type: 'json' };

type Schema = Record<string, unknown> & {
  $ref?: string;
  allOf?: Schema[];
  type?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  required?: string[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  minimum?: number;
  maximum?: number;
};

const definitions = (infraspecSchema as unknown as { definitions: Record<string, Schema> }).definitions;

/** A schema with its `$ref` (or single-`allOf` reference) followed. */
function resolve(schema: Schema): Schema {
  if (schema.$ref !== undefined) return resolve(definitions[schema.$ref.replace('#/definitions/', '')]!);
  if (schema.allOf?.length === 1 && schema.allOf[0]!.$ref !== undefined) {
    const { allOf, ...rest } = schema;
    return { ...resolve(allOf[0]!), ...rest };
  }
  return schema;
}

/** One leaf field: its path (`*` for a map key, `[]` for an array item) and its schema. */
export interface Leaf {
  readonly form: 'AppSpec' | 'LegacyFunctionSpec';
  readonly path: readonly string[];
  readonly schema: Schema;
  readonly required: boolean;
}

/** `processes.*.scaling.min`, `endpoints[].region`. */
export function leafName(path: readonly string[]): string {
  return path.reduce((out, part) => (part === '[]' ? `${out}[]` : out === '' ? part : `${out}.${part}`), '');
}

function isObjectSchema(schema: Schema): boolean {
  return schema.type === 'object' && schema.properties !== undefined;
}

function walk(form: Leaf['form'], schema: Schema, path: string[], required: boolean, out: Leaf[]): void {
  const s = resolve(schema);
  if (isObjectSchema(s)) {
    for (const [key, child] of Object.entries(s.properties!))
      walk(form, child, [...path, key], (s.required ?? []).includes(key), out);
    return;
  }
  if (s.type === 'object' && typeof s.additionalProperties === 'object') {
    walk(form, s.additionalProperties, [...path, '*'], false, out);
    return;
  }
  if (s.type === 'array' && s.items !== undefined && isObjectSchema(resolve(s.items))) {
    walk(form, s.items, [...path, '[]'], false, out);
    return;
  }
  out.push({ form, path, schema: s, required });
}

/** Every leaf field of both forms of an infraspec. */
export function schemaLeaves(): Leaf[] {
  const out: Leaf[] = [];
  walk('AppSpec', definitions.AppSpec!, [], false, out);
  walk('LegacyFunctionSpec', definitions.LegacyFunctionSpec!, [], false, out);
  return out;
}

/** Valid values of fields whose schema alone does not give one (patterns, formats, cross-field rules). */
const samples: Record<string, readonly [unknown, unknown]> = {
  name: ['demo', 'demo-two'],
  app: ['demo', 'demo-two'],
  primaryRegion: ['eu', 'us'],
  'repo.url': ['https://git.example.test/demo.git', 'https://git.example.test/other.git'],
  'repo.repoWeb': ['https://git.example.test/demo', 'https://git.example.test/demo-web'],
  'build.dockerfile': ['Dockerfile', 'deploy/Dockerfile.prod'],
  'build.image': ['registry.example.test/demo:1', 'registry.example.test/demo:2'],
  'build.test': ['npm test', 'npm run check'],
  'processes.*.port': [8080, 9090],
  'processes.*.hostPort': [18080, 18081],
  'processes.*.schedule': ['*/5 * * * *', '0 3 * * *'],
  'processes.*.timezone': ['UTC', 'Europe/Paris'],
  'processes.*.command': ['node server.mjs', 'node other.mjs'],
  'processes.*.health.path': ['/healthz', '/ready'],
  'processes.*.health.interval': ['10s', '7s'],
  'processes.*.health.timeout': ['5s', '3s'],
  'processes.*.metrics.path': ['/metrics', '/stats'],
  'processes.*.metrics.port': [9100, 9101],
  'processes.*.drain.signal': ['SIGTERM', 'SIGINT'],
  'processes.*.drain.timeout': ['30s', '45s'],
  'processes.*.function.timeout': ['30s', '2m'],
  'processes.*.canary.evaluateAfter': ['1m', '2m'],
  'processes.*.tuning.cooldown': ['1h', '2h'],
  'processes.*.tuning.signals[].window': ['5m', '10m'],
  'processes.*.tuning.signals[].name': ['rss', 'peak'],
  'processes.*.tuning.signals[].metric': ['memory_rss', 'memory_max'],
  'processes.*.regions': [['eu'], ['us']],
  'processes.*.scaling.auto.name': ['queue_depth', 'jobs_waiting'],
  // Bounds that bind on the walk's tuning view (100 MHz, 128 MB at risk, 3 allocations).
  'processes.*.tuning.limits.min.cpu': [50, 500],
  'processes.*.tuning.limits.min.memory': [64, 4096],
  'processes.*.tuning.limits.max.scale': [8, 2],
  'processes.*.tuning.profiles.*.scale': [1, 5],
  'processes.*.schedulerVariables.files[].key': ['DB_PASSWORD', 'API_TOKEN'],
  'processes.*.schedulerVariables.files[].destination': ['db-password', 'api-token'],
  'processes.*.schedulerVariables.uid': [1000, 1001],
  'processes.*.schedulerVariables.gid': [1000, 1001],
  'processes.*.env.*': ['one', 'two'],
  'env.*': ['one', 'two'],
  'regions.*.schedulerRegion': ['europe', 'europe-2'],
  'regions.*.datacenters': [['dc1'], ['eu-1a']],
  'infrastructure.postgres.database': ['demo', 'demo_two'],
  'infrastructure.objectStorage.buckets[].name': ['media-files', 'media-files-2'],
  'infrastructure.objectStorage.buckets[].env': ['MEDIA', 'UPLOADS'],
  'infrastructure.objectStorage.buckets[].prefix': ['uploads/', 'thumbs/'],
  'endpoints[].url': ['app.example.test', 'app2.example.test'],
  'endpoints[].region': ['eu', 'us'],
  'volumes[].name': ['data', 'data-two'],
  'volumes[].mount': ['/data', '/var/data'],
  'snapshots.exportBucket': ['exports', 'exports-two'],
  'placement.nodePool': ['batch', 'gpu'],
  'function.memory': ['256m', '512m'],
  migrations: ['migrations', 'db/migrations'],
};

/** A first valid value (`a`) and a second one (`b`, never the default) of a leaf. */
export function sampleValues(leaf: Leaf): readonly [unknown, unknown] | undefined {
  const name = leafName(leaf.path);
  const given = samples[name];
  if (given !== undefined) return given;
  const s = leaf.schema;
  if (s.const !== undefined) return [s.const, s.const];
  if (s.enum !== undefined) {
    const others = s.enum.filter((value) => value !== s.default);
    if (others.length === 0) return undefined;
    const a = s.default ?? others[0];
    const b = others.find((value) => value !== a);
    return b === undefined ? undefined : [a, b];
  }
  if (s.type === 'boolean') return [s.default ?? false, !(s.default ?? false)];
  if (s.type === 'integer') {
    const a = typeof s.default === 'number' ? s.default : (s.minimum ?? 0) + 1;
    return [a, a + 2];
  }
  if (s.type === 'array') return [['alpha-1'], ['beta-2']];
  if (s.type === 'string') return ['alpha-1', 'beta-2'];
  return undefined;
}

/** Keys a `*` step takes in each map, so a field and its context land on the same entry. */
const mapKeys: Record<string, string> = {
  processes: 'web',
  regions: 'eu',
  profiles: 'small',
  env: 'FEATURE_FLAG',
};

function clone<T>(value: T): T {
  return structuredClone(value);
}

/** The value of a fresh object at `path` (schema `schema`): its required fields set to their first samples. */
function freshObject(form: Leaf['form'], schema: Schema, path: readonly string[]): Record<string, unknown> {
  const s = resolve(schema);
  const object: Record<string, unknown> = {};
  for (const key of s.required ?? []) {
    const child = resolve(s.properties![key]!);
    const childPath = [...path, key];
    object[key] = isObjectSchema(child)
      ? freshObject(form, child, childPath)
      : sampleValues({ form, path: childPath, schema: child, required: true })![0];
  }
  return object;
}

/** Passed as the value to {@link withLeaf}: creates the parents of the leaf, leaves the leaf out. */
export const WITHOUT = Symbol('without');

/**
 * Sets the leaf in a copy of `base`, creating its parents (with their required fields) on the way; with
 * {@link WITHOUT}, the same spec with the parents but not the leaf, so only the leaf differs.
 */
export function withLeaf(base: Record<string, unknown>, leaf: Leaf, value: unknown): Record<string, unknown> {
  const doc = clone(base);
  let schema: Schema = definitions[leaf.form]!;
  let container: Record<string, unknown> | unknown[] = doc;
  const walked: string[] = [];
  for (let i = 0; i < leaf.path.length; i++) {
    const step = leaf.path[i]!;
    const last = i === leaf.path.length - 1;
    const s = resolve(schema);
    let key: string | number;
    let childSchema: Schema;
    if (step === '*') {
      const parentName = walked[walked.length - 1] ?? '';
      const existing = Object.keys(container);
      key = existing[0] ?? mapKeys[parentName] ?? 'entry';
      childSchema = s.additionalProperties as Schema;
    } else if (step === '[]') {
      key = 0;
      childSchema = s.items!;
    } else {
      key = step;
      childSchema = s.properties![step]!;
    }
    walked.push(step);
    const holder = container as Record<string | number, unknown>;
    if (last) {
      if (value === WITHOUT) delete holder[key];
      else holder[key] = value;
      break;
    }
    const next = leaf.path[i + 1]!;
    if (holder[key] === undefined) {
      const resolved = resolve(childSchema);
      if (resolved.type === 'array') holder[key] = [];
      else if (next === '*') holder[key] = {};
      else holder[key] = freshObject(leaf.form, resolved, leaf.path.slice(0, i + 1));
    }
    if (next === '[]' && (holder[key] as unknown[]).length === 0)
      (holder[key] as unknown[]).push(freshObject(leaf.form, resolve(childSchema).items!, leaf.path.slice(0, i + 2)));
    container = holder[key] as Record<string, unknown> | unknown[];
    schema = childSchema;
  }
  return doc;
}
