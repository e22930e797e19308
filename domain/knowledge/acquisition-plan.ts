/**
 * Acquisition planning as a pure function of detected gaps: one task per gap, typed by what would
 * close it, with a deterministic id, greedily chosen by priority within a cost budget
 * (docs/adr/0035-knowledge-acquisition.md).
 */
import { createHash } from 'node:crypto';
import { compareGaps, type GapKind, type GapReport, type KnowledgeGap } from './gap-detection.js';

/** Task types, and the cost each takes from a plan's budget. */
export const TASK_COSTS = { research: 3, crawl: 2, verification: 1, refresh: 1 } as const;
export type TaskType = keyof typeof TASK_COSTS;
export const TASK_TYPES = Object.keys(TASK_COSTS) as TaskType[];

/** Which task closes which kind of gap. */
export const TASK_FOR_GAP: Readonly<Record<GapKind, TaskType>> = {
  refuted: 'verification',
  contradicted: 'verification',
  low_confidence: 'verification',
  stale: 'refresh',
  thin_topic: 'research',
  isolated: 'crawl',
};

/** Limits of a plan. */
export const PLAN_LIMITS = { defaultBudget: 10, maxBudget: 1000, defaultMaxGaps: 50, maxMaxGaps: 500 } as const;

/** One acquisition task. */
export interface AcquisitionTask {
  readonly id: string;
  readonly type: TaskType;
  readonly priority: number;
  readonly cost: number;
  readonly gapId: string;
  readonly description: string;
  readonly prompt: string;
  readonly relatedNodeIds: readonly string[];
  readonly nearestTopics: readonly string[];
}

/** A plan over one namespace. */
export interface AcquisitionPlan {
  readonly namespace: string;
  readonly coverageScore: number;
  readonly totalNodes: number;
  readonly budget: number;
  readonly budgetUsed: number;
  /** Tasks left out because they did not fit the budget. */
  readonly deferred: number;
  readonly tasks: readonly AcquisitionTask[];
}

/** The deterministic id of the task closing `gapId` in `namespace`. */
export function taskId(namespace: string, type: TaskType, gapId: string): string {
  return `acq_${type}_${createHash('sha256').update(`${namespace}\u0000${gapId}`).digest('hex').slice(0, 16)}`;
}

function promptOf(type: TaskType, gap: KnowledgeGap): string {
  const topics = gap.nearestTopics.length > 0 ? ` Topics: ${gap.nearestTopics.join(', ')}.` : '';
  switch (type) {
    case 'verification':
      return `Verify or refute with independent, citable sources: ${gap.description}.${topics} Return each finding as evidence with its source.`;
    case 'refresh':
      return `Find the current state of this claim and report what changed: ${gap.description}.${topics} Return up-to-date evidence with its source and date.`;
    case 'research':
      return `Research this topic and return distinct, sourced facts that are not yet known: ${gap.description}.${topics}`;
    case 'crawl':
      return `Crawl for documents that mention or link to this item and return related facts with their sources: ${gap.description}.${topics}`;
  }
}

/**
 * Plans tasks for the first `maxGaps` gaps (by priority) and keeps, in priority order, each task
 * whose cost still fits in `budget` (a cheaper later task may fill what a dearer one left).
 */
export function planAcquisition(
  namespace: string,
  report: GapReport,
  budget: number = PLAN_LIMITS.defaultBudget,
  maxGaps: number = PLAN_LIMITS.defaultMaxGaps,
): AcquisitionPlan {
  const gaps = [...report.gaps].sort(compareGaps).slice(0, Math.max(0, maxGaps));
  const candidates: AcquisitionTask[] = gaps.map((gap) => {
    const type = TASK_FOR_GAP[gap.kind];
    return {
      id: taskId(namespace, type, gap.id),
      type,
      priority: gap.priority,
      cost: TASK_COSTS[type],
      gapId: gap.id,
      description: `${type} for ${gap.kind.replace('_', ' ')} gap: ${gap.description}`,
      prompt: promptOf(type, gap),
      relatedNodeIds: gap.relatedNodeIds,
      nearestTopics: gap.nearestTopics,
    };
  });
  const tasks: AcquisitionTask[] = [];
  let used = 0;
  for (const task of candidates) {
    if (used + task.cost > budget) continue;
    tasks.push(task);
    used += task.cost;
  }
  return {
    namespace,
    coverageScore: report.coverageScore,
    totalNodes: report.totalNodes,
    budget,
    budgetUsed: used,
    deferred: candidates.length - tasks.length,
    tasks,
  };
}
