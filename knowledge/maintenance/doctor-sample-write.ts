/**
 * The `doctor-sample-write` check (docs/adr/0176): a sample write, retrieve and retract through the
 * real services in a scratch namespace of its own, which is then purged, so a run leaves nothing
 * behind. `svc doctor` calls it on the admin listener and reports it like its other checks.
 */
import { randomBytes } from 'node:crypto';
import { purgeNamespace } from '../../store/knowledge/namespace-data.js';
import type { KnowledgeState } from '../core/knowledge-state.js';
import type { WriteService } from '../write/write-service.js';
import type { RetrieveService } from '../retrieve/retrieve-service.js';
import type { NodeService } from '../write/node-service.js';

/** One step of the check. */
export interface DoctorStep {
  readonly step: 'write' | 'retrieve' | 'retract' | 'cleanup';
  readonly ok: boolean;
  readonly duration_ms: number;
  readonly detail: string;
}

/** The check's report. */
export interface DoctorSampleWriteReport {
  readonly check: 'doctor-sample-write';
  readonly status: 'pass' | 'fail';
  readonly namespace: string;
  readonly steps: readonly DoctorStep[];
  readonly duration_ms: number;
}

/** Prefix of scratch namespaces; a name of this form is never a tenant's. */
export const DOCTOR_NAMESPACE_PREFIX = 'svc-doctor-';
const SOURCE = 'svc-doctor';

/** Runs the sample write, retrieve and retract. */
export class DoctorSampleWrite {
  readonly #core: KnowledgeState;
  readonly #writes: WriteService;
  readonly #retrieval: RetrieveService;
  readonly #nodes: NodeService;
  readonly #afterPurge: () => void;

  constructor(
    core: KnowledgeState,
    services: { writes: WriteService; retrieval: RetrieveService; nodes: NodeService },
    afterPurge: () => void = () => undefined,
  ) {
    this.#core = core;
    this.#writes = services.writes;
    this.#retrieval = services.retrieval;
    this.#nodes = services.nodes;
    this.#afterPurge = afterPurge;
  }

  /** Runs the check as `tenant`; never throws for a failing step (it is reported). */
  async run(tenant: string): Promise<DoctorSampleWriteReport> {
    const token = randomBytes(6).toString('hex');
    const namespace = `${DOCTOR_NAMESPACE_PREFIX}${token}`;
    const marker = `doctorprobe${token}`;
    const steps: DoctorStep[] = [];
    const started = performance.now();
    const step = async (name: DoctorStep['step'], fn: () => Promise<string>): Promise<boolean> => {
      const t0 = performance.now();
      try {
        const detail = await fn();
        steps.push({ step: name, ok: true, duration_ms: Math.round(performance.now() - t0), detail });
        return true;
      } catch (error) {
        steps.push({
          step: name,
          ok: false,
          duration_ms: Math.round(performance.now() - t0),
          detail: (error as Error).message.slice(0, 300),
        });
        return false;
      }
    };
    let nodeId = '';
    try {
      const ok =
        (await step('write', async () => {
          const r = await this.#writes.write(tenant, namespace, {
            content: `svc doctor sample write ${marker}`,
            source_id: SOURCE,
            labels: ['svc-doctor'],
            skip_dedup: true,
          });
          if (!r.admitted) throw new Error(`the sample write was not admitted: ${r.reason ?? 'no reason'}`);
          nodeId = r.node_id;
          return `node ${nodeId} written`;
        })) &&
        (await step('retrieve', async () => {
          const { results } = await this.#retrieval.retrieve(tenant, namespace, { text: marker, top_k: 5 });
          const found = results.find((r) => (r as { id?: string }).id === nodeId);
          if (!found) throw new Error(`the sample node was not retrieved by its text (${results.length} result(s))`);
          return `retrieved as result ${results.indexOf(found) + 1} of ${results.length}`;
        })) &&
        (await step('retract', async () => {
          await this.#nodes.retractSource(tenant, namespace, nodeId, {
            source_id: SOURCE,
            reason: 'svc doctor sample write',
          });
          const after = await this.#retrieval.retrieve(tenant, namespace, { text: marker, top_k: 5 });
          if (
            after.results.some(
              (r) => (r as { id?: string }).id === nodeId && (r as { retracted?: boolean }).retracted !== true,
            )
          )
            throw new Error('the sample node is still retrieved as live after its only source was retracted');
          return 'retracted; no longer retrieved as live';
        }));
      void ok;
    } finally {
      await step('cleanup', async () => this.#purge(tenant, namespace));
    }
    return {
      check: 'doctor-sample-write',
      status: steps.every((s) => s.ok) && steps.length === 4 ? 'pass' : 'fail',
      namespace,
      steps,
      duration_ms: Math.round(performance.now() - started),
    };
  }

  /** Deletes the scratch namespace with every row it has; checks nothing is left. */
  #purge(tenant: string, namespace: string): string {
    const row = this.#core.nodes.namespace(tenant, namespace);
    if (!row) return 'nothing to remove';
    const vectors = this.#core.db
      .prepare('SELECT vid, dims FROM kn_versions WHERE ns_id = ? AND dims IS NOT NULL')
      .all(row.id) as { vid: number; dims: number }[];
    this.#core.nodes.transaction(() => purgeNamespace(this.#core.db, row.id, true));
    for (const v of vectors) this.#core.index.remove(v.dims, [v.vid]);
    this.#afterPurge();
    const left = (
      this.#core.db.prepare('SELECT count(*) AS n FROM kn_versions WHERE ns_id = ?').get(row.id) as { n: number }
    ).n;
    if (left > 0 || this.#core.nodes.namespace(tenant, namespace))
      throw new Error('the scratch namespace was not removed');
    return 'scratch namespace removed with every row';
  }
}
