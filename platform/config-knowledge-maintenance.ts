/**
 * The settings of the knowledge store's backups and lifecycle (docs/adr/0174, 0175), part of
 * {@link VARIABLES} in config.ts. Every rule that deletes is off until set.
 */
import path from 'node:path';
import { ConfigError } from '../domain/errors.js';
import { MEM_TYPES, type MemType } from '../domain/knowledge/modes.js';
import { durationMs, optional, type VariableSpec } from './config-parsers.js';

/** Knowledge maintenance settings of {@link SvcConfig}. */
export interface KnowledgeMaintenanceConfig {
  /** Folder of knowledge store backups (admin API). @default <dataDir>/knowledge-backups */
  readonly knowledgeBackupDir: string;
  /** Age after its last write at which a node of a memory type expires. @default {} (off) */
  readonly knowledgeRetention: Readonly<Partial<Record<MemType, number>>>;
  /** Superseded versions closed longer ago than this are removed; 0 is off. @default 0 */
  readonly knowledgeCompactionHorizonMs: number;
  /** How often retention and compaction run when one of them is on. @default 1 h */
  readonly knowledgeLifecycleIntervalMs: number;
  /** How often VACUUM runs; 0 is off. @default 0 */
  readonly knowledgeVacuumIntervalMs: number;
}

/** `working=24h,episodic=90d`: memory type to age; empty or `off` is no retention. */
export function parseRetentionSetting(raw: string | undefined): Partial<Record<MemType, number>> {
  const value = optional(raw);
  const out: Partial<Record<MemType, number>> = {};
  if (value === undefined || value === 'off') return out;
  for (const part of value.split(',')) {
    const [type, age] = part.split('=').map((s) => s.trim());
    if (!type || !(MEM_TYPES as readonly string[]).includes(type) || age === undefined)
      throw new ConfigError(
        'SVC_KNOWLEDGE_RETENTION',
        `"${part.slice(0, 60)}" is not <memory type>=<age> with a memory type of ${MEM_TYPES.join(', ')}, e.g. working=24h`,
      );
    const ms = durationMs('SVC_KNOWLEDGE_RETENTION', 0, true)(age);
    if (ms > 0) out[type as MemType] = ms;
  }
  return out;
}

export const KNOWLEDGE_MAINTENANCE_VARIABLES = {
  knowledgeBackupDir: {
    name: 'SVC_KNOWLEDGE_BACKUP_DIR',
    description: 'Folder of knowledge store backups taken or uploaded over the admin API',
    defaultText: '<SVC_DATA_DIR>/knowledge-backups',
    parse: (raw, env) =>
      path.resolve(optional(raw) ?? path.join(optional(env.SVC_DATA_DIR) ?? '.data', 'knowledge-backups')),
  },
  knowledgeRetention: {
    name: 'SVC_KNOWLEDGE_RETENTION',
    description:
      'Knowledge retention by memory type: nodes not written for the age expire unless referenced, e.g. working=24h (comma separated); off by default',
    defaultText: 'off',
    parse: parseRetentionSetting,
  },
  knowledgeCompactionHorizonMs: {
    name: 'SVC_KNOWLEDGE_COMPACTION_HORIZON',
    description:
      'Knowledge compaction: superseded node versions closed longer ago than this (e.g. 90d) are removed; history before it is lost; off by default',
    defaultText: 'off',
    parse: durationMs('SVC_KNOWLEDGE_COMPACTION_HORIZON', 0, true),
  },
  knowledgeLifecycleIntervalMs: {
    name: 'SVC_KNOWLEDGE_LIFECYCLE_INTERVAL',
    description: 'How often knowledge retention and compaction run when one of them is on',
    defaultText: '1h',
    parse: durationMs('SVC_KNOWLEDGE_LIFECYCLE_INTERVAL', 3_600_000, true),
  },
  knowledgeVacuumIntervalMs: {
    name: 'SVC_KNOWLEDGE_VACUUM_INTERVAL',
    description:
      'How often knowledge.db is VACUUMed to return free pages to the disk (blocks knowledge writes while it runs, e.g. 7d); off by default',
    defaultText: 'off',
    parse: durationMs('SVC_KNOWLEDGE_VACUUM_INTERVAL', 0, true),
  },
} satisfies { [K in keyof KnowledgeMaintenanceConfig]: VariableSpec<KnowledgeMaintenanceConfig[K]> };
