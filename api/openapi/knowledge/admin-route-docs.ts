/**
 * Route entries of the knowledge store's admin listener (port 7702): health, metrics, the
 * debugger's reads, backups, lifecycle, the doctor's sample write, ranking evaluations, profiling.
 */
import { validateExplainRank, validateRetrieve } from '../../knowledge/request-schemas.js';
import {
  validateBackupRequest,
  validateEvalRun,
  validateLifecycleRequest,
  validateRestoreRequest,
} from '../../knowledge/maintenance-routes.js';
import type { QueryParamDoc, RouteDoc, RouteDocGroup } from '../route-doc.js';

const ns: QueryParamDoc = { name: 'ns', description: 'The namespace.', required: true };
const admin = (summary: string, answer: string, query: readonly QueryParamDoc[] = []): RouteDoc => ({
  summary,
  caller: 'admin',
  ...(query.length > 0 ? { query } : {}),
  answer: { description: answer },
});
const lifecycle = { name: 'LifecycleRequest', schema: validateLifecycleRequest.schema, optional: true };

export const ADMIN_ROUTE_DOCS: RouteDocGroup = {
  tag: 'admin',
  description: 'The admin listener (port 7702): health, metrics and the dashboard and debugger APIs.',
  routes: {
    'GET /healthz': {
      summary: 'Health of the store (open)',
      caller: 'public',
      answer: { description: '`{ status }`.' },
      errors: [503],
    },
    'GET /metrics': {
      summary: 'Metrics in the Prometheus text format (open)',
      caller: 'public',
      answer: { contentType: 'text/plain', schema: { type: 'string' }, description: 'Prometheus text exposition.' },
    },
    'POST /admin/api/explain-rank': {
      summary: 'Why one node outranks another (the debugger)',
      caller: 'admin',
      body: { name: 'ExplainRankRequest', schema: validateExplainRank.schema },
      answer: { description: 'Both score breakdowns and the deciding factors.' },
    },
    'GET /admin/api/stats': {
      summary: "The dashboard's statistics",
      caller: 'admin',
      answer: { schema: 'KnowledgeStatsAnswer' },
    },
    'GET /admin/api/metrics': admin('Runtime totals and latency for the dashboard', 'The totals.'),
    'GET /admin/api/ranking-eval': admin('A ranking evaluation over the stored queries', 'The evaluation.', [
      { name: 'top_k', description: 'Cut-off rank.' },
    ]),
    'GET /admin/api/timetravel': admin('A namespace as it was at a time', 'The nodes then.', [
      ns,
      { name: 'asof', description: 'The time.' },
    ]),
    'GET /admin/api/diff': admin('What changed in a namespace between two times', 'The changes.', [
      ns,
      { name: 'from', description: 'From this time.' },
      { name: 'to', description: 'To this time.' },
    ]),
    'GET /admin/api/search': admin('Searches nodes by text and labels', 'The matches.', [
      ns,
      { name: 'q', description: 'The text.' },
      { name: 'labels', description: 'Comma-separated labels.' },
      { name: 'limit', description: 'At most this many.' },
    ]),
    'GET /admin/api/belief': admin('A belief with its support and contradictions', 'The belief.', [
      ns,
      { name: 'id', description: 'The node id.', required: true },
    ]),
    'GET /admin/api/node': {
      summary: 'One node with its version history (the belief debugger)',
      caller: 'admin',
      query: [ns, { name: 'id', description: 'The node id.', required: true }],
      answer: { schema: 'NodeAnswer' },
    },
    'GET /admin/api/source-trust': admin("A source's credibility timeline (the belief debugger)", 'The timeline.', [
      ns,
      { name: 'source_id', description: 'The source.', required: true },
    ]),
    'GET /admin/api/feedback': admin("A node's feedback events (the belief debugger)", 'The events.', [
      ns,
      { name: 'node_id', description: 'The node.', required: true },
    ]),
    'POST /admin/api/retrieve': {
      summary: 'Ranked retrieval on the admin listener (the belief debugger); the body names the namespace',
      caller: 'admin',
      body: { name: 'RetrieveRequest', schema: validateRetrieve.schema },
      answer: { schema: 'RetrieveAnswer' },
    },
    'POST /admin/api/backups': {
      summary: 'Backs up a namespace or the whole store, or uploads a backup file (SQLite body)',
      caller: 'admin',
      body: { name: 'KnowledgeBackupRequest', schema: validateBackupRequest.schema, optional: true },
      answer: { status: 201, schema: 'KnowledgeBackupAnswer' },
    },
    'GET /admin/api/backups': {
      summary: 'Backups of the store',
      caller: 'admin',
      answer: { schema: 'KnowledgeBackupList' },
    },
    'GET /admin/api/backups/{id}': {
      summary: 'One backup',
      caller: 'admin',
      answer: { schema: 'KnowledgeBackupAnswer' },
    },
    'GET /admin/api/backups/{id}/file': {
      summary: 'The backup file (SQLite)',
      caller: 'admin',
      answer: {
        contentType: 'application/vnd.sqlite3',
        schema: { type: 'string', contentEncoding: 'binary' },
        description: 'The file.',
      },
    },
    'DELETE /admin/api/backups/{id}': {
      summary: 'Deletes a backup',
      caller: 'admin',
      answer: { status: 204, description: 'Deleted.' },
    },
    'POST /admin/api/backups/{id}/restore': {
      summary: 'Restores a backup after checking it, in one transaction',
      caller: 'admin',
      body: { name: 'KnowledgeRestoreRequest', schema: validateRestoreRequest.schema },
      answer: { description: 'The restore result.' },
      errors: [409],
    },
    'GET /admin/api/lifecycle': admin('Lifecycle settings and the last runs', 'The lifecycle state.'),
    'POST /admin/api/lifecycle/preview': {
      summary: 'What retention and compaction would remove',
      caller: 'admin',
      body: lifecycle,
      answer: { description: 'The preview.' },
    },
    'POST /admin/api/lifecycle/run': {
      summary: 'Applies retention and compaction now',
      caller: 'admin',
      body: lifecycle,
      answer: { description: 'The run.' },
    },
    'POST /admin/api/lifecycle/vacuum': admin('Runs VACUUM on the store', 'The result.'),
    'POST /admin/api/doctor/sample-write': {
      summary: 'A sample write, retrieve and retract in a scratch namespace that is removed',
      caller: 'admin',
      answer: { schema: 'DoctorSampleWriteAnswer' },
    },
    'POST /admin/api/ranking-eval/snapshots': {
      summary: 'Stores a ranking evaluation run',
      caller: 'admin',
      body: { name: 'EvalRunRequest', schema: validateEvalRun.schema, optional: true },
      answer: { status: 201, description: 'The stored run.' },
    },
    'GET /admin/api/ranking-eval/snapshots': admin('Stored ranking evaluation runs', 'The runs.'),
    'GET /admin/api/ranking-eval/snapshots/compare': admin('Compares two stored runs', 'The comparison.', [
      { name: 'from', description: 'The first run.', required: true },
      { name: 'to', description: 'The second run.', required: true },
    ]),
    'GET /admin/api/ranking-eval/snapshots/{id}': admin('One stored ranking evaluation run', 'The run.'),
    'GET /debug/pprof': admin('The profiling index', 'The available profiles.'),
    'GET /debug/pprof/profile': admin('A CPU profile', 'The profile.'),
    'GET /debug/pprof/heap': admin('A heap snapshot', 'The snapshot.'),
  },
};
