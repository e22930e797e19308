/**
 * The doctor's knowledge store check (`knowledge.sample-write`, docs/adr/0176): when the store answers
 * on this host's admin port, it runs its `doctor-sample-write` check (a write, retrieve and retract in
 * a scratch namespace it removes) and reports it like the other checks; when it does not run, the
 * check is skipped.
 */
import { doctorCheck, type DoctorCheck } from '../../domain/doctor/index.js';
import type { SvcConfig } from '../../platform/config.js';
import { answers } from '../../platform/host/host-probes.js';
import { adminToken, probeSampleWrite } from '../../platform/host/knowledge-probe.js';

const ID = 'knowledge.sample-write';
const TITLE = 'knowledge store sample write (doctor-sample-write)';

interface Step {
  readonly step: string;
  readonly ok: boolean;
  readonly detail: string;
}

/** Runs the store's sample write through its admin listener. */
export async function knowledgeSampleWriteCheck(config: SvcConfig): Promise<DoctorCheck> {
  if (config.knowledgeAdminPort === 0)
    return doctorCheck({
      id: ID,
      title: TITLE,
      required: true,
      status: 'skip',
      detail: 'admin port 0: no store to call',
    });
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${host}:${config.knowledgeAdminPort}`;
  if (!(await answers(`${url}/healthz`)))
    return doctorCheck({
      id: ID,
      title: TITLE,
      required: true,
      status: 'skip',
      detail: `no knowledge store answers at ${url}: start it (svc serve) to run the sample write`,
    });
  const open = config.knowledgeTokens === undefined && config.knowledgeTokensFile === undefined;
  const probe = await probeSampleWrite(url, {
    open,
    token: adminToken(config.knowledgeTokens, config.knowledgeTokensFile),
  });
  if (probe.kind === 'no-admin-token')
    return doctorCheck({
      id: ID,
      title: TITLE,
      required: false,
      status: 'fail',
      detail: 'no configured knowledge token grants admin, so the sample write cannot be called',
      fix: 'add a token tenant:admin:<secret> (or tenant:read+write+admin:<secret>) to SVC_KNOWLEDGE_TOKENS or its file',
    });
  if (probe.kind === 'unreachable')
    return doctorCheck({
      id: ID,
      title: TITLE,
      required: true,
      status: 'fail',
      detail: `the sample write did not answer: ${probe.detail}`,
      fix: 'check the knowledge store log (svc serve) and its data folder',
    });
  const body = probe.body as { status?: string; steps?: Step[]; duration_ms?: number; error?: { message?: string } };
  if (probe.status !== 200 || !Array.isArray(body.steps))
    return doctorCheck({
      id: ID,
      title: TITLE,
      required: true,
      status: 'fail',
      detail: `the sample write answered ${probe.status}: ${body.error?.message ?? JSON.stringify(probe.body).slice(0, 200)}`,
      fix:
        probe.status === 401 || probe.status === 403
          ? 'use a token with the admin permission'
          : 'check the knowledge store log',
    });
  const failed = body.steps.find((s) => !s.ok);
  return doctorCheck({
    id: ID,
    title: TITLE,
    required: true,
    status: body.status === 'pass' ? 'pass' : 'fail',
    detail:
      body.status === 'pass'
        ? `write, retrieve, retract and cleanup passed in ${body.duration_ms ?? '?'} ms; nothing left behind`
        : `step ${failed?.step ?? '?'} failed: ${failed?.detail ?? 'unknown'}`,
    fix: 'check the knowledge store log and knowledge.db (disk space, permissions, integrity)',
  });
}
