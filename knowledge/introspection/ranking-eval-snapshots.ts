/**
 * Stored ranking evaluation runs (feature `ranking-eval-snapshots`, docs/adr/0177): the admin API's
 * ranking evaluation run and kept with its figures, listed over time and compared two at a time.
 */
import { randomUUID } from 'node:crypto';
import { NotFoundError, ValidationError } from '../../domain/errors.js';
import { compareEvalRuns, type EvalRunSummary } from '../../domain/knowledge/retrieval/ranking-eval-compare.js';
import { EvalRunStore, type EvalRunRow } from '../../store/knowledge/eval-run-store.js';
import type { Db } from '../../store/database.js';
import { runRankingEval } from './ranking-eval.js';

/** Longest label of a stored run. */
export const EVAL_LABEL_MAX = 200;

type Report = Awaited<ReturnType<typeof runRankingEval>>;

function summaryOf(runId: string, report: Report, createdAt: number): EvalRunSummary {
  return {
    run_id: runId,
    created_at: new Date(createdAt).toISOString(),
    svc_version: report.svc_version,
    top_k: report.top_k,
    total_queries: report.total_queries,
    passed_queries: report.passed_queries,
    pass_rate: report.total_queries === 0 ? 0 : report.passed_queries / report.total_queries,
    mean_reciprocal_rank: report.mean_reciprocal_rank,
    categories: report.categories.map((c) => ({
      category: c.category,
      total_queries: c.total_queries,
      passed_queries: c.passed_queries,
      pass_rate: c.pass_rate,
      mean_reciprocal_rank: c.mean_reciprocal_rank,
    })),
    queries: report.queries.map((q) => ({
      id: q.id,
      category: q.category,
      correct_rank: q.correct_rank,
      reciprocal_rank: q.reciprocal_rank,
      passed: q.passed,
    })),
  };
}

/** Runs, stores, lists and compares ranking evaluations. */
export class RankingEvalSnapshots {
  readonly #store: EvalRunStore;
  readonly #version: string;
  readonly #now: () => number;

  constructor(db: Db, version: string, now: () => number) {
    this.#store = new EvalRunStore(db);
    this.#version = version;
    this.#now = now;
  }

  /** Runs the evaluation with `topK` and stores it; answers the stored run with its full report. */
  async record(topK: number, label: string | undefined) {
    if (label !== undefined && label.length > EVAL_LABEL_MAX)
      throw new ValidationError(`label: must be ${EVAL_LABEL_MAX} characters or fewer`, { code: 'invalid_request' });
    const now = this.#now();
    const report = await runRankingEval(topK, this.#version, now);
    const runId = randomUUID();
    const row = this.#store.insert({
      run_id: runId,
      created_at: now,
      svc_version: report.svc_version,
      top_k: topK,
      label: label ?? null,
      summary: JSON.stringify(summaryOf(runId, report, now)),
      report: JSON.stringify(report),
    });
    return { ...this.#view(row), report };
  }

  #view(row: Omit<EvalRunRow, 'report'>) {
    const s = JSON.parse(row.summary) as EvalRunSummary;
    return {
      run_id: row.run_id,
      created_at: s.created_at,
      label: row.label,
      svc_version: row.svc_version,
      top_k: row.top_k,
      total_queries: s.total_queries,
      passed_queries: s.passed_queries,
      pass_rate: s.pass_rate,
      mean_reciprocal_rank: s.mean_reciprocal_rank,
      categories: s.categories,
    };
  }

  /** Stored runs newest first, with their figures (not their full reports). */
  list(limit: number, offset: number) {
    return { total: this.#store.count(), runs: this.#store.list(limit, offset).map((r) => this.#view(r)) };
  }

  #row(runId: string): EvalRunRow {
    const row = this.#store.get(runId);
    if (!row)
      throw new NotFoundError(`ranking evaluation run "${runId.slice(0, 80)}" does not exist`, {
        code: 'eval_run_not_found',
      });
    return row;
  }

  /** One stored run with its full report. */
  get(runId: string) {
    const row = this.#row(runId);
    return { ...this.#view(row), report: JSON.parse(row.report) as Report };
  }

  /** Compares two runs; without ids, the newest run with the one before it. */
  compare(fromId: string | undefined, toId: string | undefined) {
    let from: EvalRunRow;
    let to: EvalRunRow;
    if (fromId === undefined && toId === undefined) {
      const [newest, previous] = this.#store.list(2, 0);
      if (!newest || !previous)
        throw new ValidationError('a comparison needs two stored runs; record another with POST .../snapshots', {
          code: 'eval_runs_missing',
        });
      from = this.#row(previous.run_id);
      to = this.#row(newest.run_id);
    } else if (fromId === undefined || toId === undefined) {
      throw new ValidationError('from and to: give both run ids, or neither to compare the newest two', {
        code: 'invalid_request',
      });
    } else {
      from = this.#row(fromId);
      to = this.#row(toId);
    }
    return compareEvalRuns(JSON.parse(from.summary) as EvalRunSummary, JSON.parse(to.summary) as EvalRunSummary);
  }
}
