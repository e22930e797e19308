/**
 * The starter bundle: the files of the spec's "generated observability bundle" table with their
 * contents, and the check that none of them holds a secret value.
 */
import { RULES_FILE } from './scrape-config.js';
import { SPEC_FILE, type ManagedService } from './managed-services.js';

/** One file of the bundle, by path relative to the bundle root. */
export interface BundleFile {
  readonly path: string;
  readonly purpose: string;
  readonly mediaType: string;
  readonly content: string;
}

/** What the bundle is made of. */
export interface BundleInput {
  readonly scrapeConfigYaml: string;
  readonly alertRulesYaml: string;
  readonly datasourceJson: string;
  readonly dashboardJson: string;
  readonly services: readonly ManagedService[];
}

/** Path of the scrape config in the bundle; the rules file resolves next to it. */
export const BUNDLE_SCRAPE_CONFIG = 'prometheus/prometheus.yml';

/** The bundle's files, in the order of the spec's table. */
export function bundleFiles(input: BundleInput): BundleFile[] {
  const yaml = 'application/yaml';
  return [
    {
      path: BUNDLE_SCRAPE_CONFIG,
      purpose: 'Metrics store scrape config: the control plane plus app targets, loading the alert rules',
      mediaType: yaml,
      content: input.scrapeConfigYaml,
    },
    {
      path: `prometheus/${RULES_FILE}`,
      purpose: 'Alert rules: service health, deploy failures, cron failures, snapshot pressure, low disk headroom',
      mediaType: yaml,
      content: input.alertRulesYaml,
    },
    {
      path: 'grafana/provisioning/datasources/svc-metrics.json',
      purpose: 'Starter dashboard datasource',
      mediaType: 'application/json',
      content: input.datasourceJson,
    },
    {
      path: 'grafana/dashboards/svc-platform.json',
      purpose: 'Starter platform dashboard',
      mediaType: 'application/json',
      content: input.dashboardJson,
    },
    ...input.services.map((service) => ({
      path: `services/${service.name}.${SPEC_FILE}`,
      purpose: service.purpose,
      mediaType: yaml,
      content: service.files.find((f) => f.path === SPEC_FILE)?.content ?? '',
    })),
  ];
}

/** Shortest secret value {@link findSecretLeaks} looks for. */
export const MIN_SEARCHED_SECRET_LENGTH = 8;

/** A secret found in generated content: the variable's name and the files, never the value. */
export interface SecretLeak {
  readonly variable: string;
  readonly files: readonly string[];
}

/**
 * The secrets (`name` → value) that appear in any of `files`. Values shorter than
 * {@link MIN_SEARCHED_SECRET_LENGTH} characters are not searched: they would match ordinary text by
 * accident (and nothing generated reads a secret in the first place; this is the second line).
 */
export function findSecretLeaks(
  files: readonly { readonly path: string; readonly content: string }[],
  secrets: Readonly<Record<string, string | undefined>>,
): SecretLeak[] {
  const leaks: SecretLeak[] = [];
  for (const [variable, value] of Object.entries(secrets).sort(([a], [b]) => a.localeCompare(b))) {
    if (value === undefined || value.length < MIN_SEARCHED_SECRET_LENGTH) continue;
    const hits = files.filter((f) => f.content.includes(value)).map((f) => f.path);
    if (hits.length > 0) leaks.push({ variable, files: hits });
  }
  return leaks;
}
