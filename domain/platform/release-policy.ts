/**
 * The release policy of the spec's "Versioning" (items 2 and 3): the immutable tag of a release
 * (`platform-<full commit sha>`), the fetch selector that names one, and the verdict of the
 * signature policy over what the verify hook and the signature check found (ADR 0142).
 */

/** `SVC_RELEASE_SIGNATURE_POLICY`: `require-signed` promotes only a verified release; `none` also accepts an unsigned one. */
export const SignaturePolicy = { none: 'none', requireSigned: 'require-signed' } as const;
export type SignaturePolicy = (typeof SignaturePolicy)[keyof typeof SignaturePolicy];

const TAG = /^platform-([0-9a-f]{40})$/;

/** The immutable tag of a release: `platform-<full commit sha>`, or null when the commit is unknown. */
export function releaseTag(commit: string | null): string | null {
  return commit === null || commit === '' ? null : `platform-${commit}`;
}

/** True when a release source names a release by its tag (`platform-…` without a slash): the fetch selector. */
export function isFetchSelector(source: string): boolean {
  return source.startsWith('platform-') && !source.includes('/');
}

/**
 * The commit a fetch selector names, or a message saying why it is no selector: exactly
 * `platform-` and the full 40 lower-case hex digits (never a short sha, a branch or a label).
 */
export function selectorCommit(selector: string): { readonly commit: string } | { readonly error: string } {
  const match = TAG.exec(selector);
  if (match) return { commit: match[1]! };
  return {
    error: `"${selector.slice(0, 120)}" is not a release tag: a fetch selector is platform-<full commit sha> (40 lower-case hex digits), never a short sha, branch or display label`,
  };
}

/** What the detached signature check of an artifact found. */
export type SignatureCheck =
  /** A `.sig` beside the archive verified with the configured key. */
  | { readonly state: 'valid'; readonly message: string }
  /** A `.sig` that does not verify (another key, other bytes, a damaged file). */
  | { readonly state: 'invalid'; readonly message: string }
  /** A release artifact without a `.sig`. */
  | { readonly state: 'missing'; readonly message: string }
  /** A source that cannot carry a signature (a built checkout, `git:<ref>`, an unpacked folder). */
  | { readonly state: 'unsupported'; readonly message: string };

/** The verify hook's verdict. */
export interface HookCheck {
  readonly accepted: boolean;
  readonly message: string;
}

/** The signature policy's verdict on one release. */
export type PolicyVerdict =
  | { readonly verification: 'off'; readonly message: string }
  | { readonly verification: 'accepted' | 'rejected'; readonly message: string };

/**
 * Decides a release: every check that ran and failed rejects it (a failing hook, a signature that
 * does not verify), whatever the policy; `require-signed` also rejects a release that no check
 * verified (no hook accepted it and it carries no valid signature: a missing `.sig`, or a source
 * that cannot carry one). Nothing configured under `none` is `off`.
 */
export function policyVerdict(
  policy: SignaturePolicy,
  checks: { readonly hook?: HookCheck; readonly signature?: SignatureCheck },
): PolicyVerdict {
  const { hook, signature } = checks;
  const notes: string[] = [];
  if (hook) notes.push(hook.message);
  if (signature) notes.push(signature.message);
  const message = notes.join('; ');
  if (hook && !hook.accepted) return { verification: 'rejected', message };
  if (signature?.state === 'invalid') return { verification: 'rejected', message };
  if (policy === SignaturePolicy.requireSigned) {
    if (signature?.state === 'missing')
      return {
        verification: 'rejected',
        message: `${message} (SVC_RELEASE_SIGNATURE_POLICY=require-signed with SVC_RELEASE_PUBLIC_KEY: a release artifact must carry a valid signature)`,
      };
    const verified = (hook?.accepted ?? false) || signature?.state === 'valid';
    if (!verified) {
      return {
        verification: 'rejected',
        message: `${message === '' ? 'no verify hook and no public key' : message} (SVC_RELEASE_SIGNATURE_POLICY=require-signed promotes only a release the verify hook accepted or a release artifact with a valid signature)`,
      };
    }
    return { verification: 'accepted', message };
  }
  if (!hook && !signature)
    return {
      verification: 'off',
      message: 'SVC_RELEASE_SIGNATURE_POLICY=none and no verify hook or public key is set',
    };
  return {
    verification: 'accepted',
    message:
      signature && signature.state !== 'valid' && !hook
        ? `${message}; accepted unsigned (SVC_RELEASE_SIGNATURE_POLICY=none)`
        : message,
  };
}
