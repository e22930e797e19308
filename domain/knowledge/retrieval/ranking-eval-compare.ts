/**
 * Comparison of two stored ranking evaluation runs (feature `ranking-eval-snapshots`, docs/adr/0177):
 * the change of pass rate and mean reciprocal rank overall and per category, and per query whether
 * it was fixed, regressed, ranked better or worse, or unchanged.
 */

/** What a stored run keeps of one query. */
export interface EvalQuerySummary {
  readonly id: string;
  readonly category: string;
  readonly correct_rank: number | null;
  readonly reciprocal_rank: number;
  readonly passed: boolean;
}

/** What a stored run keeps of one category. */
export interface EvalCategorySummary {
  readonly category: string;
  readonly total_queries: number;
  readonly passed_queries: number;
  readonly pass_rate: number;
  readonly mean_reciprocal_rank: number;
}

/** The figures of a stored run a comparison reads. */
export interface EvalRunSummary {
  readonly run_id: string;
  readonly created_at: string;
  readonly svc_version: string;
  readonly top_k: number;
  readonly total_queries: number;
  readonly passed_queries: number;
  readonly pass_rate: number;
  readonly mean_reciprocal_rank: number;
  readonly categories: readonly EvalCategorySummary[];
  readonly queries: readonly EvalQuerySummary[];
}

/** How one query changed between two runs. */
export type QueryChange = 'fixed' | 'regressed' | 'improved' | 'worse' | 'same' | 'added' | 'removed';

const round = (x: number) => Math.round(x * 1e6) / 1e6;

function change(from: EvalQuerySummary | undefined, to: EvalQuerySummary | undefined): QueryChange {
  if (!from) return 'added';
  if (!to) return 'removed';
  if (!from.passed && to.passed) return 'fixed';
  if (from.passed && !to.passed) return 'regressed';
  if (to.reciprocal_rank > from.reciprocal_rank) return 'improved';
  if (to.reciprocal_rank < from.reciprocal_rank) return 'worse';
  return 'same';
}

/** Compares run `from` (the earlier) with run `to`. */
export function compareEvalRuns(from: EvalRunSummary, to: EvalRunSummary) {
  const head = (r: EvalRunSummary) => ({
    run_id: r.run_id,
    created_at: r.created_at,
    svc_version: r.svc_version,
    top_k: r.top_k,
    passed_queries: r.passed_queries,
    total_queries: r.total_queries,
    pass_rate: r.pass_rate,
    mean_reciprocal_rank: r.mean_reciprocal_rank,
  });
  const names = [...new Set([...from.categories, ...to.categories].map((c) => c.category))].sort();
  const categories = names.map((category) => {
    const a = from.categories.find((c) => c.category === category);
    const b = to.categories.find((c) => c.category === category);
    return {
      category,
      from: a ? { pass_rate: a.pass_rate, mean_reciprocal_rank: a.mean_reciprocal_rank } : null,
      to: b ? { pass_rate: b.pass_rate, mean_reciprocal_rank: b.mean_reciprocal_rank } : null,
      pass_rate_delta: a && b ? round(b.pass_rate - a.pass_rate) : null,
      mean_reciprocal_rank_delta: a && b ? round(b.mean_reciprocal_rank - a.mean_reciprocal_rank) : null,
    };
  });
  const ids = [...new Set([...from.queries, ...to.queries].map((q) => q.id))].sort();
  const queries = ids.map((id) => {
    const a = from.queries.find((q) => q.id === id);
    const b = to.queries.find((q) => q.id === id);
    return {
      id,
      category: (b ?? a)!.category,
      from_rank: a?.correct_rank ?? null,
      to_rank: b?.correct_rank ?? null,
      from_passed: a?.passed ?? null,
      to_passed: b?.passed ?? null,
      change: change(a, b),
    };
  });
  const count = (c: QueryChange) => queries.filter((q) => q.change === c).length;
  return {
    from: head(from),
    to: head(to),
    pass_rate_delta: round(to.pass_rate - from.pass_rate),
    mean_reciprocal_rank_delta: round(to.mean_reciprocal_rank - from.mean_reciprocal_rank),
    changes: {
      fixed: count('fixed'),
      regressed: count('regressed'),
      improved: count('improved'),
      worse: count('worse'),
      same: count('same'),
      added: count('added'),
      removed: count('removed'),
    },
    categories,
    queries,
  };
}
