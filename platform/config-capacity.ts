/**
 * The settings of the allocation watcher and the host capacity check, part of {@link VARIABLES} in config.ts.
 */
import { ConfigError } from '../domain/errors.js';
import { durationMs, optional, parseByteSize, type VariableSpec } from './config-parsers.js';

/** Capacity settings of {@link SvcConfig}. */
export interface CapacityConfig {
  /** Allocation watcher scan period, in ms. @default 60 s */
  readonly allocationWatchIntervalMs: number;
  /** Host capacity check period, in ms; 0 disables. @default 60 s */
  readonly capacityCheckIntervalMs: number;
  /** Minimum free host memory, in bytes. @default 64 MiB */
  readonly capacityMinMemoryBytes: number;
  /** Minimum free disk of the data folder, in bytes. @default 512 MiB */
  readonly capacityMinDiskBytes: number;
}

export const CAPACITY_VARIABLES = {
  allocationWatchIntervalMs: {
    name: 'SVC_ALLOCATION_WATCH_INTERVAL',
    description: 'Allocation watcher scan period',
    defaultText: '60s',
    parse: durationMs('SVC_ALLOCATION_WATCH_INTERVAL', 60_000),
  },
  capacityCheckIntervalMs: {
    name: 'SVC_CAPACITY_CHECK_INTERVAL',
    description: 'Host capacity check period; off disables it',
    defaultText: '60s',
    parse: durationMs('SVC_CAPACITY_CHECK_INTERVAL', 60_000, true),
  },
  capacityMinMemoryBytes: {
    name: 'SVC_CAPACITY_MIN_MEMORY',
    description: 'Minimum free host memory (e.g. 64mb)',
    defaultText: '64mb',
    parse: (raw) => {
      const bytes = parseByteSize(optional(raw) ?? '64mb');
      if (bytes === undefined)
        throw new ConfigError('SVC_CAPACITY_MIN_MEMORY', `"${raw}" is not a size such as 64mb or 1gb`);
      return bytes;
    },
  },
  capacityMinDiskBytes: {
    name: 'SVC_CAPACITY_MIN_DISK',
    description: 'Minimum free disk of the data folder (e.g. 512mb)',
    defaultText: '512mb',
    parse: (raw) => {
      const bytes = parseByteSize(optional(raw) ?? '512mb');
      if (bytes === undefined)
        throw new ConfigError('SVC_CAPACITY_MIN_DISK', `"${raw}" is not a size such as 512mb or 2gb`);
      return bytes;
    },
  },
} satisfies { [K in keyof CapacityConfig]: VariableSpec<CapacityConfig[K]> };
