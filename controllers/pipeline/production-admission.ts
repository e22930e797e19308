/**
 * Production admission (`SVC_PROFILE=production`): what a deploy or preflight must satisfy before
 * anything is built, checked right after the clone. Each refusal names its rule:
 *
 * - `source.branch`: the commit is on the tracked branch (`repo.branch`, default main);
 * - `source.signature`: with `SVC_SOURCE_ALLOWED_SIGNERS` set, the commit carries a signature
 *   `git verify-commit` accepts against that allowed-signers file (SSH signing keys);
 * - `strict-secrets`: no secret value in the repository (a plaintext committed secret, a `.age`
 *   file that is not age, a secret-looking spec `env` value), and every declared secret present;
 * - `digest-pinned`: `build.image` is an `image@sha256:<digest>`;
 * - `live-substrate`: the scheduler driver answers (lists its jobs within 5 s) and, on a host
 *   driver, the host's free memory holds what the app's processes request at their minimum scale.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { looksLikeSecretName } from '../../domain/operator/index.js';
import type { Scheduler } from '../../domain/scheduler/index.js';
import type { CanonicalAppSpec } from '../../domain/spec/index.js';
import { runGit } from '../../platform/git/index.js';
import { StepFailure } from '../errors.js';
import { hasCommittedEncrypted, inspectCommittedSecrets } from '../secrets/encrypted-secrets.js';

/** The rules of production admission. */
export const AdmissionRule = {
  sourceBranch: 'source.branch',
  sourceSignature: 'source.signature',
  strictSecrets: 'strict-secrets',
  digestPinned: 'digest-pinned',
  liveSubstrate: 'live-substrate',
} as const;
export type AdmissionRule = (typeof AdmissionRule)[keyof typeof AdmissionRule];

/** What admission reads. */
export interface AdmissionInput {
  readonly spec: CanonicalAppSpec;
  /** The bare mirror the commit was resolved in. */
  readonly mirrorDir: string;
  readonly commit: string;
  /** The exported checkout (the app's folder). */
  readonly workDir: string;
  /** The app's secrets folder on the host. */
  readonly secretsDir: string;
  /** An allowed-signers file (ssh-keygen format): commits must be signed by one of its keys. */
  readonly allowedSignersFile?: string;
  /** The scheduler the app deploys to; absent: the substrate is not checked. */
  readonly scheduler?: () => Promise<Scheduler>;
  /** Whether the driver runs on this host (its free memory is the room). */
  readonly hostDriver?: boolean;
  /** Free memory of the host in MB. @default os.freemem() */
  readonly freeMemoryMb?: () => number;
}

const SUBSTRATE_TIMEOUT_MS = 5_000;

async function checkSubstrate(input: AdmissionInput): Promise<string> {
  if (!input.scheduler) return '';
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      input.scheduler().then((s) => s.listJobs()),
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no answer within ${SUBSTRATE_TIMEOUT_MS} ms`)),
          SUBSTRATE_TIMEOUT_MS,
        );
      }),
    ]);
  } catch (error) {
    refuse(AdmissionRule.liveSubstrate, `the scheduler driver does not answer (${(error as Error).message})`);
  } finally {
    clearTimeout(timer);
  }
  if (!input.hostDriver) return ', driver answers';
  const requested = Object.values(input.spec.processes).reduce(
    (sum, p) => sum + p.resources.memory * Math.max(1, p.scaling.min),
    0,
  );
  const free = Math.floor(input.freeMemoryMb?.() ?? os.freemem() / 1024 / 1024);
  if (requested > free)
    refuse(
      AdmissionRule.liveSubstrate,
      `the app's processes request ${requested} MB of memory at their minimum scale; the host has ${free} MB free`,
    );
  return `, driver answers with room (${requested} of ${free} MB free)`;
}

function refuse(rule: AdmissionRule, message: string): never {
  throw new StepFailure(`production admission refused (${rule}): ${message}`, undefined, {
    code: `admission_${rule.replace(/[.-]/g, '_')}`,
  });
}

/** Runs every rule; throws a {@link StepFailure} naming the first broken rule, else answers the step note. */
export async function admitProduction(input: AdmissionInput): Promise<string> {
  const { spec, commit } = input;
  const short = commit.slice(0, 12);
  const branch = spec.repo?.branch ?? 'main';
  try {
    await runGit(['merge-base', '--is-ancestor', commit, `refs/heads/${branch}`], { cwd: input.mirrorDir });
  } catch {
    refuse(AdmissionRule.sourceBranch, `commit ${short} is not on the tracked branch ${branch}`);
  }
  if (input.allowedSignersFile !== undefined) {
    try {
      await runGit(['-c', `gpg.ssh.allowedSignersFile=${input.allowedSignersFile}`, 'verify-commit', commit], {
        cwd: input.mirrorDir,
      });
    } catch {
      refuse(
        AdmissionRule.sourceSignature,
        `commit ${short} has no signature valid for a key of the allowed signers file ${input.allowedSignersFile}`,
      );
    }
  }
  const problems: string[] = [];
  for (const finding of inspectCommittedSecrets(spec, input.workDir))
    if (finding.severity === 'error') problems.push(`${finding.rule}: ${finding.message}`);
  const envs = [
    ['env', spec.env] as const,
    ...Object.entries(spec.processes).map(([name, p]) => [`processes.${name}.env`, p.env] as const),
  ];
  for (const [at, env] of envs)
    for (const [key, value] of Object.entries(env))
      if (looksLikeSecretName(key) && value.trim() !== '')
        problems.push(`${at}.${key} commits a secret-looking value in the spec; declare it in secrets: instead`);
  for (const key of spec.secrets)
    if (!fs.existsSync(path.join(input.secretsDir, key)) && !hasCommittedEncrypted(input.workDir, key))
      problems.push(`secrets: ${key} is declared but has no value`);
  if (problems.length > 0) refuse(AdmissionRule.strictSecrets, problems.join('; '));
  if (spec.build.image === undefined || !/@sha256:[0-9a-f]{64}$/.test(spec.build.image))
    refuse(
      AdmissionRule.digestPinned,
      `build.image must be an immutable image@sha256:<digest>${spec.build.image ? `, got ${spec.build.image}` : ', and none is set'}`,
    );
  const substrate = await checkSubstrate(input);
  return `production admission: ${short} on ${branch}${input.allowedSignersFile ? ', signature valid' : ''}, secrets strict, image pinned by digest${substrate}`;
}
