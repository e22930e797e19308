/**
 * The container security context of a task on Kubernetes (ADR 0047: apps never run as root). A
 * numeric `USER` (`uid`, `uid:gid`) becomes `runAsUser`/`runAsGroup`; no user, or root, runs as the
 * unprivileged 65532 (the `nonroot` user of distroless images); a named user is left to the image
 * (Kubernetes takes only numbers) with `runAsNonRoot` unset, since the kubelet cannot verify a name.
 * Always: no privilege escalation, every capability dropped, the runtime's default seccomp profile
 * (the Pod Security Standards' `restricted` level).
 */
import type { V1SecurityContext } from '@kubernetes/client-node';

/** The uid and gid a task runs as when it names no (or a root) user. */
export const DEFAULT_NON_ROOT_ID = 65532;

/** The security context of a task that asks to run as `user` (Docker `USER` syntax), if any. */
export function taskSecurityContext(user: string | undefined): V1SecurityContext {
  const base: V1SecurityContext = {
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
  };
  const [name = '', group] = (user ?? '').trim().split(':');
  const nonRootDefault = {
    ...base,
    runAsNonRoot: true,
    runAsUser: DEFAULT_NON_ROOT_ID,
    runAsGroup: DEFAULT_NON_ROOT_ID,
  };
  if (name === '' || name === 'root' || name === '0') return nonRootDefault;
  if (!/^\d+$/.test(name)) return base;
  const uid = Number(name);
  const gid = group !== undefined && /^\d+$/.test(group) && Number(group) !== 0 ? Number(group) : uid;
  return { ...base, runAsNonRoot: true, runAsUser: uid, runAsGroup: gid };
}
