/**
 * The secret-free part of the configuration the operator views read. The configuration is reduced
 * to booleans, names and paths once, at start, so no operator view ever holds a secret value; only
 * the response guard gets the values, to search for them.
 */
import { VARIABLES, type SvcConfig } from '../../platform/config.js';
import type { PlatformSecretFacts } from '../../domain/operator/index.js';

/** Secret-free settings of the operator views. */
export interface OperatorSettings {
  readonly profile: string;
  readonly environment: string;
  readonly appsDir: string;
  readonly dataDir: string;
  readonly apiTokenConfigured: boolean;
  readonly requireExplicitAuth: boolean;
  readonly webhookSecretConfigured: boolean;
  readonly logpushTokenConfigured: boolean;
  /** Undefined when this build has no edge access identity settings. */
  readonly edgeIdentityConfigured: boolean | undefined;
  readonly eventSinkConfigured: boolean;
  readonly objectStorageConfigured: boolean;
  readonly postgresPasswordFileConfigured: boolean;
  readonly operationWorkerEnabled: boolean;
  readonly tunnelConfigFile: string;
  readonly tunnelCredentialsFile: string;
  /** Every platform variable marked secret, with whether it is set. */
  readonly platformSecrets: readonly PlatformSecretFacts[];
}

type VariableEntry = { readonly name: string; readonly description: string; readonly secret?: boolean };

function entries(): [keyof SvcConfig, VariableEntry][] {
  return Object.entries(VARIABLES) as [keyof SvcConfig, VariableEntry][];
}

/** Whether the variable named `name` is set; undefined when this build does not know it. */
export function variableSet(config: SvcConfig, name: string): boolean | undefined {
  const found = entries().find(([, spec]) => spec.name === name);
  return found === undefined ? undefined : config[found[0]] !== undefined;
}

/** Reduces the configuration to the operator settings. */
export function operatorSettingsFrom(config: SvcConfig): OperatorSettings {
  const edgeDomain = variableSet(config, 'SVC_EDGE_ACCESS_TEAM_DOMAIN');
  const edgeAud = variableSet(config, 'SVC_EDGE_ACCESS_AUD');
  return {
    profile: config.profile,
    environment: config.environment,
    appsDir: config.appsDir,
    dataDir: config.dataDir,
    apiTokenConfigured: config.apiToken !== undefined,
    requireExplicitAuth: config.requireExplicitAuth,
    webhookSecretConfigured: config.webhookSecret !== undefined,
    logpushTokenConfigured: config.edgeLogpushToken !== undefined,
    edgeIdentityConfigured: edgeDomain === undefined || edgeAud === undefined ? undefined : edgeDomain && edgeAud,
    eventSinkConfigured: config.eventSinkUrl !== undefined,
    objectStorageConfigured:
      config.s3Endpoint !== undefined && config.s3AccessKey !== undefined && config.s3SecretKey !== undefined,
    postgresPasswordFileConfigured: config.postgresPasswordFile !== undefined,
    operationWorkerEnabled: config.operationWorkerEnabled,
    tunnelConfigFile: config.tunnelConfigFile,
    tunnelCredentialsFile: config.tunnelCredentialsFile,
    platformSecrets: entries()
      .filter(([, spec]) => spec.secret === true)
      .map(([key, spec]) => ({ variable: spec.name, set: config[key] !== undefined, description: spec.description })),
  };
}

/**
 * The values of every set secret variable (and the secret part of each knowledge token), for the
 * operator response guard to search for. Never stored elsewhere, never shown.
 */
export function secretValuesOf(config: SvcConfig): string[] {
  const values: string[] = [];
  for (const [key, spec] of entries()) {
    const value: unknown = config[key];
    if (spec.secret !== true) continue;
    // A variable of several secrets (connector tokens by id): each of them.
    if (typeof value === 'object' && value !== null) {
      for (const secret of Object.values(value)) if (typeof secret === 'string') values.push(secret);
      continue;
    }
    if (typeof value !== 'string' || value === '') continue;
    values.push(value);
    if (key === 'knowledgeTokens')
      for (const token of value.split(',')) values.push(token.trim(), token.trim().split(':').at(-1) ?? '');
  }
  return [...new Set(values.filter((v) => v !== ''))];
}
