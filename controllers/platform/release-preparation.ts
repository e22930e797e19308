/**
 * The preparation of a platform release, shared by preflight and upgrade: stage the source, verify
 * it under the signature policy (ADR 0142), and check a candidate API on a copy of control.db. The
 * release comes back recorded, having passed all three.
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  policyVerdict,
  readPlatformLanePayload,
  type ReleaseSource,
  type SignatureCheck,
  type SignaturePolicyValue,
} from '../../domain/platform/index.js';
import type {
  CandidateOutcome,
  ReleaseFolders,
  ReleaseManifest,
  VerifyOutcome,
} from '../../platform/platform-lane/index.js';
import { copyForCandidate, recordPlatformBuild } from '../../store/control/platform-lane.js';
import type { Db } from '../../store/database.js';
import type { OperationContext } from '../operations/index.js';
import { LaneStepFailure, type LaneSteps } from './lane-steps.js';

/** What preparing a release needs; part of the lane's options. */
export interface ReleasePreparationOptions {
  readonly db: Db;
  /** The releases folder (`releases/<id>/`, the `current` link). */
  readonly folders: ReleaseFolders;
  /** The source an operator named (a release artifact, a built checkout folder, `git:<ref>`, a tag `platform-<sha>`). */
  readonly sourceFor: (spec: string) => ReleaseSource;
  /** Starts a candidate API from `releaseDir` on a copy of control.db in `workDir`, and checks it. */
  readonly candidate: (options: {
    releaseDir: string;
    releaseId: string;
    workDir: string;
    signal: AbortSignal;
  }) => Promise<CandidateOutcome>;
  /** The verify hook (`SVC_RELEASE_VERIFY_HOOK`); undefined when unset. */
  readonly verify?: (dir: string, manifest: ReleaseManifest, signal: AbortSignal) => Promise<VerifyOutcome>;
  /** `SVC_RELEASE_SIGNATURE_POLICY` (ADR 0142). @default none */
  readonly signaturePolicy?: SignaturePolicyValue;
  /** Fingerprint of `SVC_RELEASE_PUBLIC_KEY` when set (artifact sources check signatures with it). */
  readonly publicKeyFingerprint?: string;
  /** Throwaway folders of candidate APIs. */
  readonly scratchDir: string;
}

/** stage, verify, candidate: the release, recorded, that passed all three. */
export async function prepareRelease(
  options: ReleasePreparationOptions,
  ctx: OperationContext,
  steps: LaneSteps,
): Promise<ReleaseManifest> {
  const payload = readPlatformLanePayload(ctx.operation.payload);
  if (payload.source === undefined) throw new LaneStepFailure('stage', 'the operation names no release source');
  const source = options.sourceFor(payload.source);
  let manifest: ReleaseManifest | undefined;
  let signature: SignatureCheck | undefined;
  let dir = '';
  await steps.run('stage', async () => {
    const staged = await options.folders.stage(source, {
      signal: ctx.signal,
      ...(payload.label === undefined ? {} : { label: payload.label }),
    });
    manifest = staged.manifest;
    signature = staged.signature;
    dir = staged.dir;
    return `${staged.created ? 'staged' : 'already on disk:'} releases/${manifest.id} (${manifest.label}, sha256 ${manifest.sha256}, commit ${manifest.commit ?? 'unknown'})`;
  });
  const release = manifest!;
  const build = {
    id: release.id,
    label: release.label,
    version: release.version,
    commit: release.commit,
    sha256: release.sha256,
    source: release.source,
  };
  const policy = options.signaturePolicy ?? 'none';
  const { verify, publicKeyFingerprint } = options;
  // A key is set but the source could not carry a signature (a built checkout, git:<ref>).
  signature ??=
    publicKeyFingerprint === undefined
      ? undefined
      : {
          state: 'unsupported',
          message: `no signature by key ${publicKeyFingerprint}: ${release.source} is not a release archive, and only a release archive (.tar.gz with its .sig) carries one`,
        };
  if (verify === undefined && signature === undefined && policy === 'none') {
    recordPlatformBuild(options.db, { ...build, verification: 'off', verificationMessage: null });
    steps.skip(
      'verify',
      'SVC_RELEASE_SIGNATURE_POLICY=none and neither SVC_RELEASE_VERIFY_HOOK nor SVC_RELEASE_PUBLIC_KEY is set',
    );
  } else {
    await steps.run('verify', async () => {
      const hook = verify === undefined ? undefined : await verify(dir, release, ctx.signal);
      const verdict = policyVerdict(policy, {
        ...(hook === undefined ? {} : { hook }),
        ...(signature === undefined ? {} : { signature }),
      });
      recordPlatformBuild(options.db, {
        ...build,
        verification: verdict.verification,
        verificationMessage: verdict.message,
      });
      if (verdict.verification === 'rejected')
        throw new LaneStepFailure(
          'verify',
          `the signature policy rejected ${release.id}: ${verdict.message}`,
          'release_rejected',
        );
      return `accepted: ${verdict.message}`;
    });
  }
  await steps.run('candidate', async () => {
    const workDir = path.join(options.scratchDir, `${ctx.operation.id}-${ctx.operation.attempts}`);
    fs.rmSync(workDir, { recursive: true, force: true });
    fs.mkdirSync(path.join(workDir, 'data'), { recursive: true });
    try {
      await copyForCandidate(options.db, path.join(workDir, 'data', 'control.db'));
      const outcome = await options.candidate({
        releaseDir: dir,
        releaseId: release.id,
        workDir,
        signal: ctx.signal,
      });
      if (!outcome.ok) throw new LaneStepFailure('candidate', outcome.message, 'candidate_unhealthy');
      return outcome.message;
    } finally {
      fs.rmSync(workDir, { recursive: true, force: true });
    }
  });
  return release;
}
