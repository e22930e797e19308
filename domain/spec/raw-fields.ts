/**
 * Reading a parsed spec document before it is known to be well-formed: the rules that run beside
 * the schema (semantic, driver, autoscale, inert-field, deploy group, fleet) look at raw values.
 */

/** A parsed YAML mapping. */
export type Fields = Record<string, unknown>;

/** True for a mapping (not a list, not null). */
export function isRecord(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The mapping at `key` of `value`, when both are mappings. */
export function recordAt(value: unknown, key: string): Fields | undefined {
  if (!isRecord(value)) return undefined;
  const item = value[key];
  return isRecord(item) ? item : undefined;
}

/** True for a whole number. */
export function isInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value);
}
