/**
 * The settings of app log capture (docs/adr/0165), part of {@link VARIABLES} in config.ts, which
 * checks that every setting is declared once.
 */
import { ConfigError } from '../domain/errors.js';
import { durationMs, parseByteSize, type VariableSpec } from './config-parsers.js';
import type { SvcConfig } from './config.js';

export const LOGS_VARIABLES = {
  logsMaxBytesPerApp: {
    name: 'SVC_LOGS_MAX_BYTES',
    description:
      'Captured app log lines kept per app in logs.db (text plus 64 bytes a line, e.g. 256mb); the oldest go first',
    defaultText: '256mb',
    parse: (raw) => {
      if (raw === undefined || raw === '') return 256 * 1024 * 1024;
      const bytes = parseByteSize(raw);
      if (bytes === undefined || bytes < 64 * 1024)
        throw new ConfigError('SVC_LOGS_MAX_BYTES', `"${raw}" is not a size of at least 64kb, such as 256mb`);
      return bytes;
    },
  },
  logsMaxAgeMs: {
    name: 'SVC_LOGS_MAX_AGE',
    description: 'Captured app log lines older than this are dropped (e.g. 7d, 48h)',
    defaultText: '7d',
    parse: durationMs('SVC_LOGS_MAX_AGE', 7 * 86_400_000),
  },
} satisfies Partial<{ [K in keyof SvcConfig]: VariableSpec<SvcConfig[K]> }>;
