/**
 * The ranking evaluation of the admin API (the origin's `/admin/api/ranking-eval`): a small
 * representative corpus is written into a private in-memory store through the real write path,
 * each query is retrieved through the real ranking, and the report gives the rank of the expected
 * node, reciprocal ranks, pass/fail per query and per category, and the score components of the
 * top results (docs/adr/0038-admin-debugger-api.md). It never reads or writes a tenant's data.
 */
import { openDatabase } from '../../store/database.js';
import { migrate } from '../../store/migrate.js';
import { KNOWLEDGE_MIGRATIONS } from '../../store/knowledge/migrations.js';
import { KnowledgeState } from '../core/knowledge-state.js';
import { WriteService, type WriteRequest } from '../write/write-service.js';
import { SourceService } from '../write/source-service.js';
import { RetrieveService, type RetrieveRequest } from '../retrieve/retrieve-service.js';

/** Largest `top_k` of an evaluation. */
export const RANKING_EVAL_MAX_TOP_K = 25;

const HOUR = 3_600_000;
/** Fixed clock of the corpus, so every run ranks identically. */
const CORPUS_NOW = Date.parse('2026-01-01T00:00:00Z');

interface CorpusNode extends Omit<WriteRequest, 'valid_from'> {
  readonly key: string;
  readonly ageHours: number;
}

interface CorpusQuery {
  readonly id: string;
  readonly category: 'lexical' | 'semantic' | 'poisoning' | 'temporal' | 'procedural';
  readonly description: string;
  readonly namespace: string;
  readonly request: RetrieveRequest;
  readonly expected: readonly string[];
}

const axis = (i: number, tilt = 0, j = (i + 1) % 8) =>
  Array.from({ length: 8 }, (_, k) => (k === i ? 1 : k === j ? tilt : 0));

const NODES: Readonly<Record<string, readonly CorpusNode[]>> = {
  'eval-general': [
    {
      key: 'err',
      content: 'Error ERR-4012 means the upstream token expired; refresh the token',
      source_id: 'runbook',
      labels: ['errors'],
      vector: axis(0, 0.2),
      ageHours: 48,
    },
    {
      key: 'err-other',
      content: 'Error ERR-4013 means the upstream quota is exhausted',
      source_id: 'runbook',
      labels: ['errors'],
      vector: axis(0, 0.25),
      ageHours: 48,
    },
    {
      key: 'cache',
      content: 'The edge cache keeps pages for ten minutes',
      source_id: 'docs',
      labels: ['cache'],
      vector: axis(1),
      ageHours: 24,
    },
    {
      key: 'deploy',
      content: 'Deploys roll out region by region behind a health gate',
      source_id: 'docs',
      labels: ['deploy'],
      vector: axis(2),
      ageHours: 24,
    },
  ],
  'eval-beliefs': [
    {
      key: 'true',
      content: 'The billing job runs nightly at 02:00 UTC',
      source_id: 'finance-team',
      labels: ['billing'],
      vector: axis(3, 0.1),
      confidence: 0.9,
      ageHours: 72,
    },
    {
      key: 'poison',
      content: 'The billing job runs every minute',
      source_id: 'anonymous-paste',
      labels: ['billing'],
      vector: axis(3, 0.6, 6),
      confidence: 0.9,
      ageHours: 1,
    },
  ],
  'eval-memory': [
    {
      key: 'old',
      content: 'The on-call engineer this week is Ana',
      source_id: 'rota',
      labels: ['oncall'],
      vector: axis(4, 0.1),
      mem_type: 'episodic',
      ageHours: 24 * 14,
    },
    {
      key: 'new',
      content: 'The on-call engineer this week is Bo',
      source_id: 'rota',
      labels: ['oncall'],
      vector: axis(4, 0.5, 7),
      mem_type: 'episodic',
      ageHours: 2,
    },
  ],
  'eval-procedures': [
    {
      key: 'restore',
      content: 'To restore a snapshot, stop writers, restore, then verify row counts',
      source_id: 'runbook',
      labels: ['procedure'],
      vector: axis(5),
      mem_type: 'procedural',
      confidence: 0.95,
      ageHours: 24 * 90,
    },
    {
      key: 'rumor',
      content: 'Restoring a snapshot just works, no need to stop anything',
      source_id: 'chat',
      labels: ['procedure'],
      vector: axis(5, 0.5, 7),
      mem_type: 'episodic',
      confidence: 0.3,
      ageHours: 3,
    },
  ],
};

const MODES: Readonly<Record<string, WriteRequest['mode']>> = {
  'eval-general': 'general',
  'eval-beliefs': 'belief_system',
  'eval-memory': 'agent_memory',
  'eval-procedures': 'procedural',
};
const LOW_CREDIBILITY: readonly { ns: string; source: string; credibility: number }[] = [
  { ns: 'eval-beliefs', source: 'anonymous-paste', credibility: 0.1 },
  { ns: 'eval-beliefs', source: 'finance-team', credibility: 0.95 },
];

const QUERIES: readonly CorpusQuery[] = [
  {
    id: 'lexical-identifier',
    category: 'lexical',
    description: 'An exact error identifier finds its own entry, not its neighbour',
    namespace: 'eval-general',
    request: { text: 'ERR-4012' },
    expected: ['err'],
  },
  {
    id: 'semantic-cache',
    category: 'semantic',
    description: 'A vector near the cache entry finds it first',
    namespace: 'eval-general',
    request: { vector: axis(1, 0.1, 2) },
    expected: ['cache'],
  },
  {
    id: 'semantic-deploy-text',
    category: 'semantic',
    description: 'Words of the deploy entry find it',
    namespace: 'eval-general',
    request: { text: 'region health gate rollout' },
    expected: ['deploy'],
  },
  {
    id: 'poisoning-credibility',
    category: 'poisoning',
    description: 'A newer claim from a low-credibility source ranks below the credible one',
    namespace: 'eval-beliefs',
    request: { vector: axis(3, 0.3, 6) },
    expected: ['true'],
  },
  {
    id: 'temporal-recency',
    category: 'temporal',
    description: 'The newer episodic memory outranks the older one',
    namespace: 'eval-memory',
    request: { vector: axis(4, 0.1) },
    expected: ['new'],
  },
  {
    id: 'procedural-confidence',
    category: 'procedural',
    description: 'The confident runbook procedure outranks a recent low-confidence rumour',
    namespace: 'eval-procedures',
    request: { vector: axis(5, 0.3, 7) },
    expected: ['restore'],
  },
];

/** Rank within which an expected node passes: strict categories need rank 1. */
function rankCutoff(category: CorpusQuery['category']): number {
  return category === 'poisoning' || category === 'temporal' || category === 'procedural' ? 1 : 3;
}

const ratio = (n: number, d: number) => (d <= 0 ? 0 : n / d);

/** One query of the report. */
export interface EvalQueryReport {
  readonly id: string;
  readonly description: string;
  readonly namespace: string;
  readonly category: CorpusQuery['category'];
  readonly expected_rank_cutoff: number;
  readonly correct_rank: number | null;
  readonly reciprocal_rank: number;
  readonly passed: boolean;
  readonly top_results: readonly Record<string, unknown>[];
}

/** Runs the evaluation with `topK` results per query. */
export async function runRankingEval(topK: number, version: string, generatedAt: number) {
  const db = openDatabase(':memory:', { vectors: true });
  try {
    migrate(db, KNOWLEDGE_MIGRATIONS);
    const core = new KnowledgeState(db, { now: () => CORPUS_NOW });
    const writes = new WriteService(core);
    const sources = new SourceService(core);
    const retrieval = new RetrieveService(core);
    const ids = new Map<string, string>();
    for (const [ns, nodes] of Object.entries(NODES)) {
      core.namespaceForWrite('ranking-eval', ns, MODES[ns]);
      for (const c of LOW_CREDIBILITY.filter((l) => l.ns === ns))
        sources.label('ranking-eval', ns, { source_id: c.source, credibility: c.credibility });
      for (const { key, ageHours, ...request } of nodes) {
        const r = await writes.write('ranking-eval', ns, {
          ...request,
          valid_from: new Date(CORPUS_NOW - ageHours * HOUR).toISOString(),
        });
        ids.set(`${ns}/${key}`, r.node_id);
      }
    }
    const keyOf = new Map([...ids].map(([k, v]) => [v, k.split('/')[1]!]));
    const queries: EvalQueryReport[] = [];
    for (const q of QUERIES) {
      const { results } = await retrieval.retrieve('ranking-eval', q.namespace, { ...q.request, top_k: topK });
      const expected = new Set(q.expected.map((k) => ids.get(`${q.namespace}/${k}`)));
      const correctRank = results.findIndex((r) => expected.has(r.id)) + 1;
      const cutoff = Math.min(rankCutoff(q.category), Math.max(1, results.length));
      queries.push({
        id: q.id,
        description: q.description,
        namespace: q.namespace,
        category: q.category,
        expected_rank_cutoff: cutoff,
        correct_rank: correctRank === 0 ? null : correctRank,
        reciprocal_rank: correctRank === 0 ? 0 : 1 / correctRank,
        passed: correctRank > 0 && correctRank <= cutoff,
        top_results: results.map((r, i) => ({
          rank: i + 1,
          node_id: r.id,
          key: keyOf.get(r.id) ?? null,
          text: r.content,
          expected: expected.has(r.id),
          score: r.score,
          similarity_score: r.similarity_score,
          confidence_score: r.confidence_score,
          recency_score: r.recency_score,
          utility_score: r.utility_score,
          score_breakdown: r.score_breakdown,
          retrieval_source: r.retrieval_source,
        })),
      });
    }
    const categories = [...new Set(queries.map((q) => q.category))].sort().map((category) => {
      const inCat = queries.filter((q) => q.category === category);
      const passed = inCat.filter((q) => q.passed).length;
      return {
        category,
        total_queries: inCat.length,
        passed_queries: passed,
        failed_queries: inCat.length - passed,
        pass_rate: ratio(passed, inCat.length),
        mean_reciprocal_rank: ratio(
          inCat.reduce((s, q) => s + q.reciprocal_rank, 0),
          inCat.length,
        ),
      };
    });
    const passed = queries.filter((q) => q.passed).length;
    return {
      schema_version: 1,
      generated_at: new Date(generatedAt).toISOString(),
      svc_version: version,
      corpus: 'representative',
      top_k: topK,
      total_queries: queries.length,
      passed_queries: passed,
      failed_queries: queries.length - passed,
      mean_reciprocal_rank: ratio(
        queries.reduce((s, q) => s + q.reciprocal_rank, 0),
        queries.length,
      ),
      categories,
      queries,
    };
  } finally {
    db.close();
  }
}
