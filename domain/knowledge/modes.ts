/**
 * Namespace modes and memory types of the knowledge store, with their ranking defaults.
 * Pure data: see docs/adr/0022-ranking-and-fusion.md for where the numbers come from.
 */

/** How a namespace is used; selects the default ranking weights. */
export const NamespaceMode = {
  general: 'general',
  beliefSystem: 'belief_system',
  agentMemory: 'agent_memory',
  procedural: 'procedural',
} as const;
export type NamespaceMode = (typeof NamespaceMode)[keyof typeof NamespaceMode];
export const NAMESPACE_MODES: readonly NamespaceMode[] = Object.values(NamespaceMode);

/** The kind of memory a node holds; selects how fast its recency decays. */
export const MemType = {
  episodic: 'episodic',
  semantic: 'semantic',
  procedural: 'procedural',
  working: 'working',
} as const;
export type MemType = (typeof MemType)[keyof typeof MemType];
export const MEM_TYPES: readonly MemType[] = Object.values(MemType);

/** The four ranking weights; each contribution is weight times raw component. */
export interface ScoreWeights {
  readonly similarity: number;
  readonly confidence: number;
  readonly recency: number;
  readonly utility: number;
}

/** Default weights per namespace mode (each row sums to 1). */
export const DEFAULT_WEIGHTS: Readonly<Record<NamespaceMode, ScoreWeights>> = {
  general: { similarity: 0.4, confidence: 0.3, recency: 0.2, utility: 0.1 },
  belief_system: { similarity: 0.3, confidence: 0.45, recency: 0.2, utility: 0.05 },
  agent_memory: { similarity: 0.35, confidence: 0.2, recency: 0.25, utility: 0.2 },
  procedural: { similarity: 0.4, confidence: 0.4, recency: 0.15, utility: 0.05 },
};

/**
 * Recency decay rate α per hour, by memory type: recency = exp(-α · age in hours).
 * `working` memory is near-immediate (half-life about 14 minutes).
 */
export const RECENCY_ALPHA: Readonly<Record<MemType | 'untyped', number>> = {
  episodic: 0.08,
  semantic: 0.02,
  procedural: 0.001,
  working: 3,
  untyped: 0.05,
};

/** Lowest source credibility whose writes are admitted. */
export const CREDIBILITY_FLOOR = 0.05;

/** Credibility of a source nobody has labelled yet. */
export const DEFAULT_SOURCE_CREDIBILITY = 0.6;

/** Confidence of a node written without one. */
export const DEFAULT_CONFIDENCE = 0.5;

/** The per-path candidate budget: max(4 · top_k, 50). */
export function defaultCandidateK(topK: number): number {
  return Math.max(4 * topK, 50);
}
